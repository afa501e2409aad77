/// A JSON syntax error, at a byte offset. It never carries the document's contents.
struct JSONSyntaxError: Error {
    let reason: String
    let offset: Int
}

/// Scans a document's structure onto its tape, with the rules of Foundation's `JSONDecoder`:
/// RFC 8259 JSON plus trailing commas in arrays and objects, at most 512 levels of nesting, and
/// the contents of strings and numbers left to be checked when they are decoded.
struct JSONScanner {
    private struct Open {
        let tapeIndex: Int
        let isObject: Bool
        var count = 0
    }

    static let maximumDepth = 512

    private let document: JSONDocument
    private let base: UnsafePointer<UInt8>
    private let end: Int
    private var index = 0

    init(document: JSONDocument) {
        self.document = document
        base = UnsafePointer(document.bytes.baseAddress!)
        end = document.bytes.count
    }

    /// Fills the document's tape, or throws where the structure is broken.
    mutating func scan() throws(JSONSyntaxError) {
        // The innermost open container lives in `top`; those around it wait in `outer`.
        var outer: [Open] = []
        var top: Open?
        if end >= 3, base[0] == 0xEF, base[1] == 0xBB, base[2] == 0xBF { index = 3 }

        value: while true {
            let byte = try nextNonWhitespace()
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard outer.count + (top == nil ? 0 : 1) < Self.maximumDepth else { throw fail("too many nested arrays or objects") }
                let isObject = byte == UInt8(ascii: "{")
                index += 1
                let start = document.tapeCount
                document.append(0, 0)
                if try nextNonWhitespace() == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    index += 1
                    document.patch(start, (isObject ? JSONDocument.Kind.object : .array).rawValue, document.tapeCount)
                } else {
                    if let open = top { outer.append(open) }
                    top = Open(tapeIndex: start, isObject: isObject)
                    if isObject { try scanKey() }
                    continue value
                }
            case UInt8(ascii: "\""):
                try scanString()
            case UInt8(ascii: "t"):
                try literal("true", .true)
            case UInt8(ascii: "f"):
                try literal("false", .false)
            case UInt8(ascii: "n"):
                try literal("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                scanNumber()
            default:
                throw fail("unexpected character")
            }

            // After a value: go on to the next element or member, or close containers.
            while var container = top {
                container.count += 1
                let close = container.isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
                let separator = try nextNonWhitespace()
                if separator == UInt8(ascii: ",") {
                    index += 1
                    if try nextNonWhitespace() != close {
                        top = container
                        if container.isObject { try scanKey() }
                        continue value
                    }
                } else if separator != close {
                    throw fail(container.isObject ? "expected ',' or '}' in an object" : "expected ',' or ']' in an array")
                }
                index += 1
                let kind = container.isObject ? JSONDocument.Kind.object : .array
                document.patch(container.tapeIndex, kind.rawValue | container.count << 8, document.tapeCount)
                top = outer.popLast()
            }
            break
        }
        while index < end {
            switch base[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: throw fail("unexpected character after the top-level value")
            }
        }
    }

    private func fail(_ reason: String) -> JSONSyntaxError {
        JSONSyntaxError(reason: reason, offset: index)
    }

    @inline(__always)
    private mutating func nextNonWhitespace() throws(JSONSyntaxError) -> UInt8 {
        while index < end {
            let byte = base[index]
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return byte
            }
        }
        throw fail("unexpected end of the document")
    }

    /// A member's key and the colon after it.
    private mutating func scanKey() throws(JSONSyntaxError) {
        guard try nextNonWhitespace() == UInt8(ascii: "\"") else { throw fail("expected a key in an object") }
        try scanString()
        guard try nextNonWhitespace() == UInt8(ascii: ":") else { throw fail("expected ':' after a key") }
        index += 1
    }

    private mutating func literal(_ word: StaticString, _ kind: JSONDocument.Kind) throws(JSONSyntaxError) {
        let count = word.utf8CodeUnitCount
        for offset in 1..<count {
            guard index + offset < end else {
                index = end
                throw fail("unexpected end of the document")
            }
            guard base[index + offset] == word.utf8Start[offset] else {
                index += offset
                throw fail("unexpected character in a literal")
            }
        }
        index += count
        document.append(kind.rawValue, 0)
    }

    /// Skips a string, noting whether it is plain (no escape or control character) and ASCII.
    private mutating func scanString() throws(JSONSyntaxError) {
        index += 1
        let start = index
        var plain = true
        var bits: UInt8 = 0
        var wordBits: UInt64 = 0
        while true {
            // Most bytes are neither a quote, a backslash nor a control character: eight at a
            // time up to the first one that is, then one at a time near the document's end.
            while end - index >= 8 {
                let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
                let special = Self.specialBytes(word)
                if special == 0 {
                    wordBits |= word
                    index += 8
                    continue
                }
                // The lowest flagged byte is exactly the first special one (little-endian).
                let ordinary = special.trailingZeroBitCount / 8
                wordBits |= word & ((1 << (ordinary * 8)) &- 1)
                index += ordinary
                break
            }
            while end - index < 8, index < end, base[index] > UInt8(ascii: "\"") && base[index] != UInt8(ascii: "\\") {
                bits |= base[index]
                index += 1
            }
            guard index < end else { break }
            let byte = base[index]
            if byte == UInt8(ascii: "\"") {
                var flags = plain ? JSONDocument.plain : 0
                if bits & 0x80 == 0 && wordBits & 0x8080_8080_8080_8080 == 0 { flags |= JSONDocument.ascii }
                document.append(JSONDocument.Kind.string.rawValue | flags << 4 | start << 8, index - start)
                index += 1
                return
            }
            if byte < 0x20 {
                plain = false
            } else if byte == UInt8(ascii: "\\") {
                plain = false
                index += 1
                guard index < end else { break }
                if base[index] == UInt8(ascii: "u") {
                    // Four more bytes, none of them a quote; whether they are hex digits is
                    // checked when the string is decoded.
                    guard end - index > 4 else { index = end; break }
                    for offset in 1...4 where base[index + offset] == UInt8(ascii: "\"") {
                        throw fail("invalid \\u escape")
                    }
                    index += 4
                }
            }
            index += 1
        }
        throw fail("unexpected end of the document in a string")
    }

    /// The high bit of each of the eight bytes of `word` that is a quote, a backslash or a control
    /// character, and possibly of bytes after the first such one (the classic bit tricks: a byte
    /// is flagged when it is zero after an exclusive or, or below 0x20; a borrow can only flag
    /// bytes above a flagged one).
    @inline(__always)
    private static func specialBytes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let quotes = word ^ (ones &* 0x22)
        let backslashes = word ^ (ones &* 0x5C)
        let zeroQuote = (quotes &- ones) & ~quotes
        let zeroBackslash = (backslashes &- ones) & ~backslashes
        let control = (word &- ones &* 0x20) & ~word
        return (zeroQuote | zeroBackslash | control) & 0x8080_8080_8080_8080
    }

    /// Skips the characters a number may hold; whether they form one is checked when decoded.
    private mutating func scanNumber() {
        let start = index
        var flags = JSONDocument.integral
        index += 1
        scanning: while index < end {
            switch base[index] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"):
                break
            case UInt8(ascii: "."):
                flags &= ~JSONDocument.integral
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                flags = JSONDocument.exponent
            default:
                break scanning
            }
            index += 1
        }
        document.append(JSONDocument.Kind.number.rawValue | flags << 4 | start << 8, index - start)
    }
}
