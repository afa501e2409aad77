/// A configuration file's JSON, read by RFC 8259's grammar alone: no comments, trailing commas,
/// single quotes, `NaN` or `Infinity`, unquoted keys or duplicate keys, all of which some parsers
/// (Foundation's among them) let through. Only its shape is kept (keys, where they are written,
/// and the kind of each value), for checking the keys; the values are read by the configuration
/// provider.
enum ConfigJSON: Sendable {
    /// An object's members, in the order written.
    case object([Member])
    /// An array's elements.
    case array([ConfigJSON])
    /// A string, a number, `true`, `false` or `null`.
    case scalar

    /// One member of an object: its key and where the key is written.
    struct Member: Sendable {
        let key: String
        let value: ConfigJSON
        let line: Int
        let column: Int
    }

    /// The members of an object, or `nil` for any other value.
    var members: [Member]? {
        if case .object(let members) = self { return members }
        return nil
    }
}

/// Why a configuration file is not standard JSON, and where (1-based line and column).
struct ConfigJSONSyntaxError: Error, Sendable {
    let line: Int
    let column: Int
    let problem: String
}

/// A strict JSON reader of ``ConfigJSON``: whatever RFC 8259 does not allow is an error naming
/// the line and column.
struct ConfigJSONParser {
    /// The deepest nesting read: a configuration needs a few levels, and a deeper one would only
    /// exhaust the stack of whoever parses it next.
    static let maximumDepth = 64

    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var lineStart = 0

    private init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Parses `bytes`, which must hold one JSON object and nothing else but whitespace.
    static func parse(_ bytes: [UInt8]) throws(ConfigJSONSyntaxError) -> ConfigJSON {
        var parser = ConfigJSONParser(bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            throw parser.error("it starts with a byte order mark; save it as UTF-8 without one")
        }
        parser.skipWhitespace()
        guard parser.peek == UInt8(ascii: "{") else {
            throw parser.error(
                parser.peek == nil
                    ? "the file is empty; expected a JSON object" : "expected a JSON object ({ … }) at the top level, found \(parser.found)"
            )
        }
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.peek == nil else { throw parser.error(parser.describeUnexpected(after: "the top-level object")) }
        return value
    }

    // MARK: - Values

    private mutating func value(depth: Int) throws(ConfigJSONSyntaxError) -> ConfigJSON {
        guard depth < Self.maximumDepth else { throw error("nesting deeper than \(Self.maximumDepth) levels") }
        guard let byte = peek else { throw error("expected a value, found the end of the file") }
        switch byte {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""):
            _ = try string()
            return .scalar
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try number()
            return .scalar
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default: throw error(describeUnexpected(after: nil))
        }
        return .scalar
    }

    private mutating func object(depth: Int) throws(ConfigJSONSyntaxError) -> ConfigJSON {
        index += 1  // {
        var members: [ConfigJSON.Member] = []
        var seen: [String: Int] = [:]
        skipWhitespace()
        if peek == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            let (keyLine, keyColumn) = (line, index - lineStart + 1)
            guard peek == UInt8(ascii: "\"") else {
                if peek == UInt8(ascii: "}"), members.last != nil { throw error("a trailing comma before }") }
                if peek == UInt8(ascii: "'") { throw error("a key in single quotes; JSON uses double quotes") }
                if peek == UInt8(ascii: "/") || peek == UInt8(ascii: "#") { throw error(describeUnexpected(after: nil)) }
                throw error("expected a key in double quotes, found \(found)")
            }
            let key = try string()
            if let first = seen[key] {
                throw ConfigJSONSyntaxError(
                    line: keyLine, column: keyColumn,
                    problem: "the key \"\(Self.printable(key))\" is set twice in one object (first on line \(first))")
            }
            seen[key] = keyLine
            skipWhitespace()
            guard peek == UInt8(ascii: ":") else { throw error("expected a colon after the key, found \(found)") }
            index += 1
            skipWhitespace()
            let value = try value(depth: depth + 1)
            members.append(ConfigJSON.Member(key: key, value: value, line: keyLine, column: keyColumn))
            skipWhitespace()
            switch peek {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return .object(members)
            default: throw error("expected , or } after a member, found \(found)")
            }
        }
    }

    private mutating func array(depth: Int) throws(ConfigJSONSyntaxError) -> ConfigJSON {
        index += 1  // [
        var elements: [ConfigJSON] = []
        skipWhitespace()
        if peek == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            if peek == UInt8(ascii: "]") { throw error("a trailing comma before ]") }
            elements.append(try value(depth: depth + 1))
            skipWhitespace()
            switch peek {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return .array(elements)
            default: throw error("expected , or ] after an element, found \(found)")
            }
        }
    }

    /// A string (the opening quote at `index`), decoded: escapes checked, no raw control
    /// characters, valid UTF-8 and no lone surrogates.
    private mutating func string() throws(ConfigJSONSyntaxError) -> String {
        index += 1  // "
        var decoded: [UInt8] = []
        while true {
            guard let byte = peek else { throw error("a string is not closed") }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = String(validating: decoded, as: UTF8.self) else { throw error("a string is not valid UTF-8") }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                try escape(into: &decoded)
            case 0..<0x20:
                throw error("a control character in a string; write it as an escape (\\n, \\t, \\u0000)")
            default:
                decoded.append(byte)
                index += 1
            }
        }
    }

    private mutating func escape(into decoded: inout [UInt8]) throws(ConfigJSONSyntaxError) {
        guard let byte = peek else { throw error("a string is not closed") }
        index += 1
        let simple: [UInt8: UInt8] = [
            UInt8(ascii: "\""): UInt8(ascii: "\""), UInt8(ascii: "\\"): UInt8(ascii: "\\"), UInt8(ascii: "/"): UInt8(ascii: "/"),
            UInt8(ascii: "b"): 0x08, UInt8(ascii: "f"): 0x0C, UInt8(ascii: "n"): 0x0A, UInt8(ascii: "r"): 0x0D, UInt8(ascii: "t"): 0x09,
        ]
        if let replacement = simple[byte] {
            decoded.append(replacement)
            return
        }
        guard byte == UInt8(ascii: "u") else {
            index -= 1  // The error points at the letter after the backslash.
            throw error("an escape JSON does not have; its escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX")
        }
        var scalar = try hex4()
        if (0xD800...0xDBFF).contains(scalar) {
            guard bytes[index...].starts(with: [UInt8(ascii: "\\"), UInt8(ascii: "u")]) else {
                throw error("a \\u escape of half a UTF-16 surrogate pair")
            }
            index += 2
            let low = try hex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw error("a \\u escape of half a UTF-16 surrogate pair") }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(scalar) {
            throw error("a \\u escape of half a UTF-16 surrogate pair")
        }
        // Every value left is a valid scalar: surrogates were handled above.
        guard let unicode = Unicode.Scalar(scalar) else { throw error("a \\u escape of no Unicode character") }
        decoded.append(contentsOf: String(Character(unicode)).utf8)
    }

    private mutating func hex4() throws(ConfigJSONSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = peek, let digit = Self.hexValue(byte) else { throw error("expected four hexadecimal digits after \\u") }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private mutating func number() throws(ConfigJSONSyntaxError) {
        let start = index
        try scanNumber()
        // Standard, but beyond what a Double holds: the provider could not read it.
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard Double(text)?.isFinite == true else {
            throw ConfigJSONSyntaxError(line: line, column: start - lineStart + 1, problem: "a number too large to read (beyond ±1.7e308)")
        }
    }

    private mutating func scanNumber() throws(ConfigJSONSyntaxError) {
        if peek == UInt8(ascii: "-") {
            index += 1
            if peek == UInt8(ascii: "I") { throw error("-Infinity, which is not a JSON number") }
        }
        guard let first = peek, Self.isDigit(first) else { throw error("expected a digit in a number, found \(found)") }
        index += 1
        if first == UInt8(ascii: "0"), let next = peek, Self.isDigit(next) { throw error("a number with a leading zero") }
        skipDigits()
        if peek == UInt8(ascii: ".") {
            index += 1
            guard let next = peek, Self.isDigit(next) else { throw error("expected a digit after the decimal point") }
            skipDigits()
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            index += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
            guard let next = peek, Self.isDigit(next) else { throw error("expected a digit in the exponent") }
            skipDigits()
        }
    }

    private mutating func literal(_ word: String) throws(ConfigJSONSyntaxError) {
        guard bytes[index...].starts(with: word.utf8) else { throw error(describeUnexpected(after: nil)) }
        index += word.utf8.count
        if let next = peek, Self.isWordByte(next) { throw error(describeUnexpected(after: nil)) }
    }

    // MARK: - Bytes

    private var peek: UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    private mutating func skipDigits() {
        while let byte = peek, Self.isDigit(byte) { index += 1 }
    }

    /// Skips JSON's four whitespace bytes, counting lines.
    private mutating func skipWhitespace() {
        while let byte = peek {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"): index += 1
            case UInt8(ascii: "\n"):
                index += 1
                line += 1
                lineStart = index
            default: return
            }
        }
    }

    /// What is at `index`, for a message: a character (printable ASCII) or a byte.
    private var found: String {
        guard let byte = peek else { return "the end of the file" }
        return (0x21...0x7E).contains(byte)
            ? "'\(Character(Unicode.Scalar(byte)))'" : "the byte 0x\(String(byte, radix: 16, uppercase: true))"
    }

    /// What an unexpected value at `index` most likely is.
    private func describeUnexpected(after place: String?) -> String {
        let rest = bytes[index...]
        let prefix = place.map { "unexpected content after \($0): " } ?? "expected a value, found "
        if rest.starts(with: "//".utf8) || rest.starts(with: "/*".utf8) { return "a comment; JSON has none" }
        if rest.first == UInt8(ascii: "#") { return "a comment; JSON has none" }
        if rest.first == UInt8(ascii: "'") { return "a string in single quotes; JSON uses double quotes" }
        if rest.starts(with: "NaN".utf8) || rest.starts(with: "Infinity".utf8) { return "NaN or Infinity, which are not JSON numbers" }
        if rest.first == UInt8(ascii: "+") || rest.first == UInt8(ascii: ".") {
            return "a number with a leading + or ., which JSON does not allow"
        }
        if rest.first == UInt8(ascii: ",") { return "a stray comma" }
        return prefix + found
    }

    private func error(_ problem: String) -> ConfigJSONSyntaxError {
        // Columns count bytes from the line's start; lines are counted as whitespace is skipped.
        ConfigJSONSyntaxError(line: line, column: index - lineStart + 1, problem: problem)
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || byte == UInt8(ascii: "_")
    }

    private static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    /// `key` for a message: at most 64 characters, control characters escaped.
    static func printable(_ key: String) -> String {
        let shown = key.unicodeScalars.prefix(64).map {
            $0.properties.generalCategory == .control ? "\\u{\(String($0.value, radix: 16))}" : String($0)
        }.joined()
        return key.unicodeScalars.count > 64 ? shown + "…" : shown
    }
}
