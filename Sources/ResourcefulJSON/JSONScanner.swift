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
    /// Stage one's bitmaps while ``scanIndexed()`` runs (three words per 64 bytes from
    /// `origin`: quotes, backslashes and controls, non-ASCII bytes; see
    /// ``JSONStructuralIndex``), else nil.
    private var bitmaps: UnsafePointer<UInt64>?
    private var blockCount = 0
    private var origin = 0
    /// Whether the last ``scanIndexed()`` filled the tape from the index (rather than again
    /// byte by byte).
    private(set) var usedIndex = false
    /// The document's tape while it is filled, kept here rather than behind the document's
    /// reference so that appending stays in registers; handed back by ``finish()``.
    private var tape: UnsafeMutablePointer<Int>
    private var tapeCount = 0
    private var tapeCapacity: Int

    init(document: JSONDocument) {
        self.document = document
        base = document.bytes.baseAddress!
        end = document.bytes.count
        (tape, tapeCapacity) = document.takeTape()
    }

    /// Hands the tape back to the document; called once, as a scan returns or throws.
    private mutating func finish() {
        document.adoptTape(tape, count: tapeCount, capacity: tapeCapacity)
    }

    @inline(__always)
    private mutating func append(_ word0: Int, _ word1: Int) {
        if tapeCount &+ 2 > tapeCapacity { growTape() }
        // In bounds: tapeCount + 2 <= tapeCapacity, made so just above.
        tape[tapeCount] = word0
        tape[tapeCount &+ 1] = word1
        tapeCount &+= 2
    }

    @inline(__always)
    private func patch(_ index: Int, _ word0: Int, _ word1: Int) {
        // In bounds: `index` is a container's own entry, appended earlier.
        tape[index] = word0
        tape[index + 1] = word1
    }

    private mutating func growTape() {
        (tape, tapeCapacity) = tape.doubled(count: tapeCount, capacity: tapeCapacity)
    }

    /// The offset of the document's first byte after a UTF-8 byte order mark, if it has one.
    private var start: Int {
        end >= 3 && base[0] == 0xEF && base[1] == 0xBB && base[2] == 0xBF ? 3 : 0
    }

    /// Fills the document's tape in two stages: ``JSONStructuralIndex`` finds every string's
    /// quotes with SIMD code and checks UTF-8, then the structure is walked, taking each string's
    /// end and flags from the index. Where the index cannot be used, or the walk finds the
    /// document broken, it is scanned again byte by byte with ``scan()``, so that an error is
    /// exactly the scalar scanner's and a document the index misreads can only cost time.
    mutating func scanIndexed() throws(JSONSyntaxError) {
        defer { finish() }
        let origin = start
        let index = JSONStructuralIndex(base, count: end, origin: origin)
        if index.isUsable {
            // The pointer is `index`'s buffer, alive until this function returns; it is cleared
            // below before it does.
            bitmaps = UnsafePointer(index.bitmaps)
            blockCount = index.blockCount
            self.origin = origin
            var scanned = true
            // Every quote stage one found is met by a walk that ends well: the walk reads every
            // byte outside strings, and one of them that is a quote starts a string (which must
            // be at a quote bit) or ends the walk with an error; inside a string, the next quote
            // bit is its end.
            do throws(JSONSyntaxError) {
                try walk()
            } catch {
                scanned = false
            }
            bitmaps = nil
            if scanned {
                document.isValidUTF8 = index.isValidUTF8
                usedIndex = true
                return
            }
            tapeCount = 0
            self.index = 0
        }
        try walk()
    }

    /// Fills the document's tape reading every byte, or throws where the structure is broken.
    mutating func scan() throws(JSONSyntaxError) {
        defer { finish() }
        try walk()
    }

    /// Walks the document's structure onto the tape, with stage one's index while there is one.
    private mutating func walk() throws(JSONSyntaxError) {
        // The innermost open container lives in `top` while `depth` > 0; those around it wait
        // in `outer`.
        var outer: [Open] = []
        var top = Open(tapeIndex: 0, isObject: false)
        var depth = 0
        index = start
        // Whether a member's key comes first: read here, in one place, so the key's string is
        // read inline rather than in a call.
        var key = false
        // The string flags every key has.
        var keyFlags = JSONDocument.plain | JSONDocument.ascii
        defer { document.keysArePlainASCII = keyFlags == JSONDocument.plain | JSONDocument.ascii }

        value: while true {
            var byte = try nextNonWhitespace()
            if key {
                key = false
                guard byte == UInt8(ascii: "\"") else { throw fail("expected a key in an object") }
                keyFlags &= try scanString()
                guard try nextNonWhitespace() == UInt8(ascii: ":") else { throw fail("expected ':' after a key") }
                index &+= 1
                byte = try nextNonWhitespace()
            }
            switch byte {
            case UInt8(ascii: "\""):
                try scanString()
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard depth < Self.maximumDepth else { throw fail("too many nested arrays or objects") }
                let isObject = byte == UInt8(ascii: "{")
                index &+= 1
                let start = tapeCount
                append(0, 0)
                if try nextNonWhitespace() == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    index &+= 1
                    patch(start, (isObject ? JSONDocument.Kind.object : .array).rawValue, tapeCount)
                } else {
                    if depth > 0 { outer.append(top) }
                    top = Open(tapeIndex: start, isObject: isObject)
                    depth &+= 1
                    key = isObject
                    continue value
                }
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
            while depth > 0 {
                top.count &+= 1
                let close = top.isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
                let separator = try nextNonWhitespace()
                if separator == UInt8(ascii: ",") {
                    index &+= 1
                    if try nextNonWhitespace() != close {
                        key = top.isObject
                        continue value
                    }
                } else if separator != close {
                    throw fail(top.isObject ? "expected ',' or '}' in an object" : "expected ',' or ']' in an array")
                }
                index &+= 1
                let kind = top.isObject ? JSONDocument.Kind.object : .array
                patch(top.tapeIndex, kind.rawValue | top.count << 8, tapeCount)
                depth &-= 1
                if depth > 0 { top = outer.removeLast() }
            }
            break
        }
        while index < end {
            switch base[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index &+= 1
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
            case 0x20, 0x09, 0x0A, 0x0D:
                index &+= 1
                // A second whitespace byte: a run (indentation), skipped 16 bytes at a time.
                if end &- index >= 16, Self.isWhitespace(base[index]) { skipWhitespaceRun() }
            default: return byte
            }
        }
        throw fail("unexpected end of the document")
    }

    @inline(__always)
    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// Moves `index` past whitespace with SIMD compares while 16 bytes are left, to the first
    /// byte that is not whitespace or to where fewer than 16 bytes are left.
    private mutating func skipWhitespaceRun() {
        while end - index >= 16 {
            // In bounds: index + 16 <= end, checked by the loop.
            let mask = JSONBlock.whitespace(UnsafeRawPointer(base + index))
            if mask != 0xFFFF {
                index += (~mask).trailingZeroBitCount
                return
            }
            index += 16
        }
    }

    @inline(__always)
    private mutating func literal(_ word: StaticString, _ kind: JSONDocument.Kind) throws(JSONSyntaxError) {
        let count = word.utf8CodeUnitCount
        // The common case in one comparison: the word's last four bytes (all of `true` and
        // `null`, `alse` of `false`) read as one integer.
        if end - index >= count {
            // In bounds: index + count <= end, checked just above.
            let last4 = UnsafeRawPointer(base + index + count - 4).loadUnaligned(as: UInt32.self)
            if last4 == UnsafeRawPointer(word.utf8Start + count - 4).loadUnaligned(as: UInt32.self) {
                index += count
                append(kind.rawValue, 0)
                return
            }
        }
        try brokenLiteral(word, kind)
    }

    /// A literal read byte by byte, to the error of the first byte that is not the word's.
    private mutating func brokenLiteral(_ word: StaticString, _ kind: JSONDocument.Kind) throws(JSONSyntaxError) {
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
        append(kind.rawValue, 0)
    }

    /// Skips a string, noting whether it is plain (no escape or control character) and ASCII;
    /// returns those flags.
    @inline(__always)
    @discardableResult
    private mutating func scanString() throws(JSONSyntaxError) -> Int {
        if let bitmaps { return try indexedString(bitmaps) }
        return try scalarString()
    }

    /// A string's end and flags from stage one's bitmaps: the quote at `index` must be one of
    /// stage one's, and the next one is the string's end; its contents' backslashes, controls
    /// and non-ASCII bytes are those of the bitmaps' words up to it.
    @inline(__always)
    private mutating func indexedString(_ bitmaps: UnsafePointer<UInt64>) throws(JSONSyntaxError) -> Int {
        // The arithmetic wraps nowhere: offsets are below the document's length.
        let open = index &- origin
        var word = open &>> 6
        // In bounds: origin <= index < the document's length, so `word` < blockCount, and each
        // word read below is checked against `blockCount` first.
        // The quote at `index` has its bit: the walk meets a quote outside a string only where
        // the byte before it is whitespace, `[`, `{`, `,` or `:` (or there is none), so no
        // backslash escapes it. Only the bits after it are read.
        // The bits after the opening quote in its word (none when it is the word's last bit).
        let after: UInt64 = (~0 &<< UInt64(open & 63)) &<< 1
        var quotes = bitmaps[word &* 3] & after
        var specials = bitmaps[word &* 3 &+ 1] & after
        var nonASCII = bitmaps[word &* 3 &+ 2] & after
        var passedSpecials: UInt64 = 0
        var passedNonASCII: UInt64 = 0
        while quotes == 0 {
            // The whole rest of this word is in the string.
            passedSpecials |= specials
            passedNonASCII |= nonASCII
            word &+= 1
            guard word < blockCount else { throw fail("a string the index does not end") }
            quotes = bitmaps[word &* 3]
            specials = bitmaps[word &* 3 &+ 1]
            nonASCII = bitmaps[word &* 3 &+ 2]
        }
        let before = (quotes & (0 &- quotes)) &- 1
        specials = passedSpecials | specials & before
        nonASCII = passedNonASCII | nonASCII & before
        let close = origin &+ word &<< 6 &+ quotes.trailingZeroBitCount
        let start = index &+ 1
        let flags = (specials == 0 ? JSONDocument.plain : 0) | (nonASCII == 0 ? JSONDocument.ascii : 0)
        append(JSONDocument.Kind.string.rawValue | flags &<< 4 | start &<< 8, close &- start)
        index = close &+ 1
        return flags
    }

    /// A string read byte by byte.
    private mutating func scalarString() throws(JSONSyntaxError) -> Int {
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
                append(JSONDocument.Kind.string.rawValue | flags << 4 | start << 8, index - start)
                index += 1
                return flags
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
    @inline(__always)
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
        append(JSONDocument.Kind.number.rawValue | flags << 4 | start << 8, index - start)
    }
}
