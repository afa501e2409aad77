import Foundation

extension JSONDocument {
    /// The string at tape `index`, unescaped and checked: valid UTF-8, no raw control character,
    /// valid escapes and surrogate pairs.
    func string(at index: Int) throws(JSONSyntaxError) -> String {
        let raw = contents(index)
        let flags = flags(index)
        if flags & Self.plain != 0 {
            if flags & Self.ascii != 0 || isValidUTF8 { return Self.validatedString(raw, isASCII: flags & Self.ascii != 0) }
            guard let string = String(validating: raw, as: UTF8.self) else {
                throw JSONSyntaxError(reason: "a string is not valid UTF-8", offset: offset(index))
            }
            return string
        }
        return try unescape(raw, at: offset(index))
    }

    /// A string of bytes already known to be valid UTF-8, made without checking them again.
    ///
    /// - Precondition: `raw` is valid UTF-8, and ASCII where `isASCII`: callers pass a plain
    ///   string's contents whose flags say ASCII (every byte was seen below 0x80 by the scanner),
    ///   or of a document stage one found valid UTF-8 throughout (a string starts after and ends
    ///   before an ASCII quote, so it never splits a character).
    @inline(__always)
    static func validatedString(_ raw: UnsafeBufferPointer<UInt8>, isASCII: Bool) -> String {
        // `raw` is within the document's bytes (the tape's offset and length), alive for the call.
        if #available(macOS 26, *) {
            return String(copying: UTF8Span(unchecked: raw.span, isKnownASCII: isASCII))
        }
        return String(decoding: raw, as: UTF8.self)
    }

    /// Whether the string at tape `index` equals the string of the UTF-8 bytes `utf8`, as
    /// `String`s compare (canonical equivalence).
    func string(at index: Int, equals utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let decoded = try? string(at: index) else { return false }
        return decoded == String(decoding: utf8, as: UTF8.self)
    }

    private func unescape(_ raw: UnsafeBufferPointer<UInt8>, at offset: Int) throws(JSONSyntaxError) -> String {
        // In a document stage one found valid UTF-8 the bytes between escapes need no check:
        // the string is unescaped into bytes and made once.
        if isValidUTF8 { return try Self.unescapeValidated(raw, at: offset) }
        var output = ""
        output.reserveCapacity(raw.count)
        var chunkStart = 0
        var position = 0

        func flush(upTo end: Int) throws(JSONSyntaxError) {
            guard end > chunkStart else { return }
            guard let chunk = String(validating: UnsafeBufferPointer(rebasing: raw[chunkStart..<end]), as: UTF8.self) else {
                throw JSONSyntaxError(reason: "a string is not valid UTF-8", offset: offset + chunkStart)
            }
            output += chunk
        }

        while position < raw.count {
            let byte = raw[position]
            if byte == UInt8(ascii: "\\") {
                try flush(upTo: position)
                output.unicodeScalars.append(try Self.escapedScalar(raw, at: &position, offset: offset))
                chunkStart = position
            } else if byte < 0x20 {
                throw JSONSyntaxError(reason: "unescaped control character in a string", offset: offset + position)
            } else {
                position += 1
            }
        }
        try flush(upTo: raw.count)
        return output
    }

    /// The string of the valid UTF-8 `raw` with its escapes replaced, written into one buffer
    /// (no longer than `raw`: every escape is longer than what it stands for) and made into a
    /// `String` once; the errors, and their order, of ``unescape(_:at:)``.
    private static func unescapeValidated(_ raw: UnsafeBufferPointer<UInt8>, at offset: Int) throws(JSONSyntaxError) -> String {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(raw.count, 1)) { buffer throws(JSONSyntaxError) -> String in
            // In bounds: `written` <= `position` at every step (each escape writes fewer bytes
            // than it reads), and `position` < raw.count where a byte is read.
            let output = buffer.baseAddress!
            var written = 0
            var position = 0
            while position < raw.count {
                let byte = raw[position]
                if byte != UInt8(ascii: "\\") {
                    guard byte >= 0x20 else { throw JSONSyntaxError(reason: "unescaped control character in a string", offset: offset + position) }
                    output[written] = byte
                    written += 1
                    position += 1
                    continue
                }
                let scalar = try escapedScalar(raw, at: &position, offset: offset)
                for unit in UTF8.encode(scalar).unsafelyUnwrapped {
                    output[written] = unit
                    written += 1
                }
            }
            return validatedString(UnsafeBufferPointer(start: output, count: written), isASCII: false)
        }
    }

    /// The character of the escape whose backslash is at `position` in `raw`, with `position`
    /// moved past the escape (past both halves of a surrogate pair).
    @inline(__always)
    private static func escapedScalar(_ raw: UnsafeBufferPointer<UInt8>, at position: inout Int, offset: Int) throws(JSONSyntaxError) -> Unicode.Scalar {
        // The scanner made sure an escape has its character, and `\u` its four bytes.
        let escaped = raw[position + 1]
        position += 2
        switch escaped {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): return Unicode.Scalar(escaped)
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let lead = try hexQuad(raw, at: position, offset: offset)
            position += 4
            guard UTF16.isLeadSurrogate(lead) else {
                guard let scalar = Unicode.Scalar(lead) else {
                    throw JSONSyntaxError(reason: "an escape is not a Unicode scalar", offset: offset + position - 6)
                }
                return scalar
            }
            guard position + 6 <= raw.count, raw[position] == UInt8(ascii: "\\"), raw[position + 1] == UInt8(ascii: "u") else {
                throw JSONSyntaxError(reason: "a high surrogate is not followed by a low one", offset: offset + position)
            }
            let trail = try hexQuad(raw, at: position + 2, offset: offset)
            guard UTF16.isTrailSurrogate(trail) else {
                throw JSONSyntaxError(reason: "a high surrogate is not followed by a low one", offset: offset + position)
            }
            position += 6
            return UTF16.decode(UTF16.EncodedScalar([lead, trail]))
        default:
            throw JSONSyntaxError(reason: "invalid escape sequence", offset: offset + position - 1)
        }
    }

    private static func hexQuad(_ raw: UnsafeBufferPointer<UInt8>, at position: Int, offset: Int) throws(JSONSyntaxError) -> UInt16 {
        guard position + 4 <= raw.count else {
            throw JSONSyntaxError(reason: "invalid \\u escape", offset: offset + position)
        }
        var value: UInt16 = 0
        for byte in raw[position..<position + 4] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw JSONSyntaxError(reason: "invalid \\u escape", offset: offset + position)
            }
            value = value << 4 | UInt16(digit)
        }
        return value
    }
}
