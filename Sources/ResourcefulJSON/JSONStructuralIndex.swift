/// Stage one of a scan: every string's quotes, found 64 bytes at a time with SIMD compares (see
/// ``JSONBlock``), with what the tape needs to know of each string, and the document's UTF-8
/// checked in the same pass.
///
/// Three bitmaps, one bit per byte, one word of each per 64 bytes from `origin`:
/// - Quotes that a backslash does not escape (an odd run of backslashes escapes the byte after
///   it: simdjson's carry trick on the backslash bits, carried across blocks). Outside strings
///   such quotes open strings and inside they close them, so stage two (``JSONScanner``) takes a
///   string's end from the next bit after its opening quote instead of reading its bytes.
/// - Backslashes and control characters, and non-ASCII bytes, read by stage two for the range
///   of each string (its "plain" and "ascii" flags).
/// And whether the whole document is valid UTF-8: if it is, so is every string (a string starts
/// and ends at an ASCII quote, never inside a multi-byte character).
///
/// Structural characters and whitespace are read by stage two as it walks the structure: they sit
/// next to each other between strings, so a structure walk reads them as cheaply as an index
/// would give them. Where this stage cannot promise the scalar scanner's reading (a `\u` escape
/// whose four bytes hold a quote or a backslash, which the scalar scanner reads differently, or
/// a document of 4 GiB or more) ``isUsable`` is false and the caller scans without it.
struct JSONStructuralIndex: ~Copyable {
    /// Three words per 64 bytes from `origin`: unescaped quotes, backslashes and control
    /// characters, bytes from 0x80 up.
    let bitmaps: UnsafeMutablePointer<UInt64>
    /// The number of 64-byte blocks.
    let blockCount: Int
    /// Where the blocks start: 0, or 3 after a byte order mark.
    let origin: Int
    private(set) var isValidUTF8 = true
    private(set) var isUsable = true

    /// Scans `count` bytes at `base`, from `origin` on.
    init(_ base: UnsafePointer<UInt8>, count: Int, origin: Int) {
        self.origin = origin
        // Offsets are 32 bits, and the blocks' bit lanes are laid out for a little-endian word:
        // elsewhere the index is not used (nor allocated at its size).
        #if _endian(big)
        let usable = false
        #else
        let usable = UInt64(count) < UInt64(UInt32.max)
        #endif
        blockCount = usable ? (count - origin + 63) / 64 : 0
        bitmaps = .allocate(capacity: max(blockCount, 1) * 3)
        guard usable else {
            isUsable = false
            return
        }
        scan(base, count: count)
    }

    deinit {
        bitmaps.deallocate()
    }

    /// The number of unescaped quotes, counted from the bitmaps (for benchmarks).
    var quoteCount: Int {
        var count = 0
        for block in 0..<blockCount {
            // In bounds: three words for each of the `blockCount` blocks.
            count += bitmaps[block * 3].nonzeroBitCount
        }
        return count
    }

    private mutating func scan(_ base: UnsafePointer<UInt8>, count: Int) {
        var escapeCarry: UInt64 = 0
        var validatedUpTo = origin
        var offset = origin
        var block = 0
        while offset < count {
            let classified: JSONBlock
            if count &- offset >= 64 {
                // In bounds: offset + 64 <= count, checked just above.
                classified = JSONBlock(UnsafeRawPointer(base + offset))
            } else {
                // The last partial block: its bytes copied into 64 spaces (spaces are none of
                // the classes), so the SIMD code never reads past the document.
                classified = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { buffer in
                    // In bounds: count - offset < 64 bytes go into a 64-byte buffer.
                    let start = buffer.baseAddress!
                    start.initialize(repeating: 0x20, count: 64)
                    start.update(from: base + offset, count: count - offset)
                    return JSONBlock(UnsafeRawPointer(start))
                }
            }
            var quoteBits = classified.quotes
            if classified.backslashes | escapeCarry != 0 {
                let escaped = Self.escapedBytes(classified.backslashes, carry: &escapeCarry)
                quoteBits &= ~escaped
                checkUnicodeEscapes(escaped, base, offset: offset, count: count)
            }
            // In bounds: `block` counts the 64-byte blocks from `origin`, three words each.
            bitmaps[block &* 3] = quoteBits
            bitmaps[block &* 3 &+ 1] = classified.backslashes | classified.controls
            bitmaps[block &* 3 &+ 2] = classified.nonASCII
            if classified.nonASCII != 0 && isValidUTF8 {
                let first = offset + classified.nonASCII.trailingZeroBitCount
                if let next = UTF8Validation.validate(base, from: max(first, validatedUpTo), to: min(offset + 64, count), count: count) {
                    validatedUpTo = next
                } else {
                    isValidUTF8 = false
                }
            }
            // Wraps nowhere: offsets are below the document's length, under 4 GiB.
            offset &+= 64
            block &+= 1
        }
    }

    /// The bytes that an odd run of backslashes escapes, with `carry` (1 when the previous block
    /// ended in an odd run) in and out: simdjson's carry trick. Runs starting on even and on odd
    /// bit positions are added to the backslash bits separately; where a run's carry ends tells
    /// whether it was odd.
    @inline(__always)
    static func escapedBytes(_ backslashes: UInt64, carry: inout UInt64) -> UInt64 {
        let evenBits: UInt64 = 0x5555_5555_5555_5555
        let oddBits = ~evenBits
        let startEdges = backslashes & ~(backslashes &<< 1)
        let evenStartMask = evenBits ^ carry
        let evenStarts = startEdges & evenStartMask
        let oddStarts = startEdges & ~evenStartMask
        let evenCarries = backslashes &+ evenStarts
        var (oddCarries, overflow) = backslashes.addingReportingOverflow(oddStarts)
        oddCarries |= carry
        carry = overflow ? 1 : 0
        let evenCarryEnds = evenCarries & ~backslashes
        let oddCarryEnds = oddCarries & ~backslashes
        return (evenCarryEnds & oddBits) | (oddCarryEnds & evenBits)
    }

    /// The scalar scanner reads the four bytes after `\u` blindly, refusing a quote among them;
    /// where one of them is a quote or a backslash, the two readings can differ, so the index is
    /// not used.
    private mutating func checkUnicodeEscapes(_ escaped: UInt64, _ base: UnsafePointer<UInt8>, offset: Int, count: Int) {
        var bits = escaped
        while bits != 0 {
            let position = offset + bits.trailingZeroBitCount
            bits &= bits &- 1
            // An escape past the end is a string cut short: the scalar scanner reports it.
            guard position < count else { isUsable = false; return }
            guard base[position] == UInt8(ascii: "u") else { continue }
            guard count - position > 4 else { isUsable = false; return }
            for step in 1...4 {
                // In bounds: position + 4 < count, checked above.
                let byte = base[position + step]
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { isUsable = false; return }
            }
        }
    }
}
