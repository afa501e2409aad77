import Foundation

/// Finding an object's member by the name of a coding key, on the tape, without building strings.
extension JSONDecoding {
    /// The tape index of the first member key among those from `from` to `end` that names
    /// `target` under the key strategy (the default or `convertFromSnakeCase`).
    ///
    /// Keys are compared as `JSONDecoder` compares them, as strings (canonical equivalence: `é`
    /// and `e` + U+0301 are the same key, as are `K` and U+212A KELVIN SIGN); bytes are compared
    /// where that is the same thing, between ASCII keys and an ASCII name.
    /// A name that is not ASCII is searched as strings alone (an ASCII key can equal it: `K` and
    /// the Kelvin sign); for an ASCII name the searches below compare bytes where that settles
    /// it and strings where it does not.
    ///
    /// Under the default keys the name is not checked first: the plain search passes an ASCII key
    /// over only when its bytes differ from the name's, which settles it for an ASCII name, and
    /// returns one only when they are the same, which proves the name ASCII. Only an answer
    /// found otherwise (a key compared as a string, or none) waits on the check.
    @inline(__always)
    func search(_ target: UnsafeBufferPointer<UInt8>, from: Int, to end: Int) -> Int? {
        if snakeCaseKeys {
            guard Self.isASCII(target) else { return stringSearch(target, from: from, to: end) }
            return snakeCaseSearch(target, from: from, to: end)
        }
        let member = plainSearch(target, from: from, to: end)
        // In bounds: `member` is the tape index of a key, as the search returned it.
        if let member, document.tape[member] &>> 4 & 0xF == JSONDecoding.plainASCII { return member }
        return Self.isASCII(target) ? member : stringSearch(target, from: from, to: end)
    }

    /// Whether every byte of `bytes` is below 0x80, read eight at a time.
    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let start = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(start)
        var bits: UInt64 = 0
        var offset = 0
        // In bounds: each load reads eight of the `bytes.count` bytes, then one at a time.
        while bytes.count &- offset >= 8 {
            bits |= raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            offset &+= 8
        }
        while offset < bytes.count {
            bits |= UInt64(start[offset])
            offset &+= 1
        }
        return bits & 0x8080_8080_8080_8080 == 0
    }

    /// The search for a name that is not ASCII: every key made a string (converted under
    /// `convertFromSnakeCase`) and compared with it as a string.
    @inline(never)
    private func stringSearch(_ target: UnsafeBufferPointer<UInt8>, from: Int, to end: Int) -> Int? {
        let name = String(decoding: target, as: UTF8.self)
        var member = from
        while member < end {
            // The same bytes are the same string, without making one (the keys before it were
            // compared as strings).
            if !convertsKeys, document.flags(member) & JSONDocument.plain != 0 {
                let raw = document.contents(member)
                if raw.count == target.count, raw.count == 0 || memcmp(raw.baseAddress!, target.baseAddress!, raw.count) == 0 {
                    return member
                }
            }
            if let key = try? convertedKey(member, path: nil), key == name { return member }
            member = document.next(member &+ 2)
        }
        return nil
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
            if word &>> 4 & 0xF == JSONDecoding.plainASCII {
                // An ASCII key and an ASCII name: the same string exactly when the same bytes.
                if tape[member &+ 1] == count {
                    let raw = base + (word &>> 8)
                    if count == 0 || raw[0] == first {
                        var offset = 1
                        while offset < count && raw[offset] == target[offset] { offset &+= 1 }
                        if offset >= count { return member }
                    }
                }
            } else if tape[member &+ 1] >= count, document.string(at: member, equals: target) {
                // Escaped or not ASCII: compared as strings. Neither can be shorter in bytes than
                // the ASCII string it equals (an escape or a character outside ASCII takes two
                // bytes or more and stands for one character at most).
                return member
            }
            member = Self.member(after: member, in: tape)
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
            member = Self.member(after: member, in: tape)
        }
        return nil
    }

    /// The tape index of the member after the one whose key is at `member`: past its value, as
    /// ``JSONDocument/next(_:)`` finds it, from the tape a search has in hand.
    @inline(__always)
    private static func member(after member: Int, in tape: UnsafeMutablePointer<Int>) -> Int {
        // The arithmetic wraps nowhere: tape indices are below the tape's size.
        let value = member &+ 2
        return tape[value] & 0xF >= JSONDocument.Kind.array.rawValue ? tape[value &+ 1] : value &+ 2
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
        // Escaped, not ASCII, or of another shape: converted and compared as strings.
        guard let key = try? convertedKey(member, path: nil) else { return false }
        return key == String(decoding: target, as: UTF8.self)
    }

    static let plainASCII = JSONDocument.plain | JSONDocument.ascii
}
