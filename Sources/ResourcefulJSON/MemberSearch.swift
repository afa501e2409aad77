import Foundation

/// Finding an object's member by the name of a coding key, on the tape, without building strings.
extension JSONDecoding {
    /// The tape index of the first member key among those from `from` to `end` that names
    /// `target` under the key strategy (the default or `convertFromSnakeCase`).
    @inline(__always)
    func search(_ target: UnsafeBufferPointer<UInt8>, from: Int, to end: Int) -> Int? {
        snakeCaseKeys ? snakeCaseSearch(target, from: from, to: end) : plainSearch(target, from: from, to: end)
    }

    /// The search under the default keys: a plain key's bytes are its value.
    @inline(__always)
    private func plainSearch(_ target: UnsafeBufferPointer<UInt8>, from: Int, to end: Int) -> Int? {
        let tape = document.tape
        let base = UnsafePointer(document.bytes.baseAddress!)
        let count = target.count
        let first = count > 0 ? target[0] : 0
        var member = from
        // The arithmetic wraps nowhere: tape indices and lengths are below the tape's size.
        while member < end {
            let word = tape[member]
            if word &>> 4 & JSONDocument.plain != 0 {
                if tape[member &+ 1] == count {
                    let raw = base + (word &>> 8)
                    if count == 0 || raw[0] == first {
                        var offset = 1
                        while offset < count && raw[offset] == target[offset] { offset &+= 1 }
                        if offset >= count { return member }
                    }
                }
            } else if document.string(at: member, equals: target) {
                return member
            }
            let value = member &+ 2
            member = tape[value] & 0xF >= JSONDocument.Kind.array.rawValue ? tape[value &+ 1] : value &+ 2
        }
        return nil
    }

    /// The search under `convertFromSnakeCase`, kept out of line so that the default search's
    /// caller stays small.
    @inline(never)
    private func snakeCaseSearch(_ target: UnsafeBufferPointer<UInt8>, from: Int, to end: Int) -> Int? {
        let tape = document.tape
        let base = UnsafePointer(document.bytes.baseAddress!)
        let count = target.count
        let first = count > 0 ? target[0] : 0
        let last = count > 0 ? target[count - 1] : 0
        let known = snakeCaseMemo?.key(for: target)
        var member = from
        while member < end {
            let word = tape[member]
            // A plain ASCII key converts to one no longer than itself, starting with its own
            // first byte or that byte lower-cased: most keys are ruled out on those alone.
            if word &>> 4 & 0xF == JSONDocument.plain | JSONDocument.ascii {
                // It ends with its own last byte too (the last byte of a word, or a trailing
                // underscore), that byte's case changed at most: most keys that share the
                // first byte are ruled out on the last.
                let raw = base + (word &>> 8)
                let length = tape[member &+ 1]
                if length >= count,
                   count == 0 || (raw[0] == first || raw[0] | 0x20 == first) && Self.sameLetter(raw[length &- 1], last) {
                    // The bytes of a key known to convert to the name convert to it too.
                    if let known, known.length == length, memcmp(raw, base + known.offset, length) == 0 {
                        return member
                    }
                    if snakeCaseKey(member, matches: target) {
                        snakeCaseMemo?.remember(target, keyOffset: word &>> 8, length: length)
                        return member
                    }
                }
            } else if snakeCaseKey(member, matches: target) {
                return member
            }
            let value = member &+ 2
            member = tape[value] & 0xF >= JSONDocument.Kind.array.rawValue ? tape[value &+ 1] : value &+ 2
        }
        return nil
    }

    /// Whether ASCII bytes `a` and `b` are equal, or the same letter in either case.
    @inline(__always)
    private static func sameLetter(_ a: UInt8, _ b: UInt8) -> Bool {
        a == b || (a ^ b == 0x20 && (a | 0x20) &- UInt8(ascii: "a") < 26)
    }

    private func snakeCaseKey(_ member: Int, matches target: UnsafeBufferPointer<UInt8>) -> Bool {
        if document.flags(member) == JSONDocument.plain | JSONDocument.ascii,
           let matches = SnakeCaseKeys.matches(document.contents(member), target) {
            return matches
        }
        return (try? convertedKey(member, path: nil))?.utf8.elementsEqual(target) ?? false
    }
}
