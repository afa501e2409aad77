/// Masks the values of secret keys in a JSON document in one pass over its bytes: no object tree,
/// and every byte that is not a masked value kept as it was (order, spacing, number forms).
///
/// The document is checked against the JSON grammar (RFC 8259) as it is read; one that does not
/// follow it, or nests deeper than ``maxDepth``, cannot be masked and gives `nil`, so that it is
/// never shown as it is. Keys are compared decoded (`"pass\u0077ord"` is `password`).
///
/// A string value that holds a JSON object or array (`{"payload":"{\"password\":…}"}`, as a
/// server that parses it would read it), after spaces or a byte order mark too, or a JSON string
/// that holds one (JSON encoded twice), is masked as a document of its own and written back as a
/// string; one that looks like JSON (braces or brackets at both ends) but does not parse, or that
/// nests more than ``maxEmbeddedDepth`` such strings, is replaced whole, since it cannot be
/// masked with certainty. Any other string value is shown as `maskText` gives it (URLs without
/// userinfo, forms masked, or replaced whole: ``Redactor/maskedText(_:)``).
enum JSONMasking {
    /// The deepest nesting read; deeper documents are not masked (nor shown).
    static let maxDepth = 256
    /// How many documents inside strings inside strings are masked; deeper ones are replaced.
    static let maxEmbeddedDepth = 4
    /// What a masked value becomes.
    private static let replacement = Array("\"\(Redactor.mask)\"".utf8)

    /// The result of masking a document.
    enum Outcome: Equatable {
        /// No key was masked: the document as it is.
        case unchanged
        /// The document with masked values replaced.
        case masked([UInt8])
        /// Not JSON (or too deep).
        case invalid
    }

    /// Masks `bytes`, a whole JSON text (any value at the top, whitespace around it).
    static func mask(
        _ bytes: UnsafeBufferPointer<UInt8>,
        isMasked: (String) -> Bool,
        maskText: (String) -> String = { $0 }
    ) -> Outcome {
        mask(bytes, embeddedDepth: 0, depth: 0, isMasked: isMasked, maskText: maskText)
    }

    /// ``mask(_:isMasked:)`` for a document found `embeddedDepth` strings deep, in a string
    /// `depth` containers deep: its containers count on from there towards ``maxDepth``, so that
    /// documents in strings do not nest deeper than one document may.
    private static func mask(
        _ bytes: UnsafeBufferPointer<UInt8>,
        embeddedDepth: Int,
        depth: Int,
        isMasked: (String) -> Bool,
        maskText: (String) -> String
    ) -> Outcome {
        // The scanner lives only within this call.
        withoutActuallyEscaping(isMasked) { isMasked in
            withoutActuallyEscaping(maskText) { maskText in
                var scanner = Scanner(bytes: bytes, isMasked: isMasked, maskText: maskText)
                scanner.embeddedDepth = embeddedDepth
                scanner.skipWhitespace()
                guard scanner.value(depth: depth) else { return .invalid }
                scanner.skipWhitespace()
                guard scanner.index == bytes.count else { return .invalid }
                guard scanner.masked else { return .unchanged }
                scanner.output.append(contentsOf: bytes[scanner.copied...])
                return .masked(scanner.output)
            }
        }
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        let isMasked: (String) -> Bool
        let maskText: (String) -> String
        var index = 0
        /// The masked document so far, up to ``copied``; empty while nothing was masked.
        var output: [UInt8] = []
        /// Whether a value was masked.
        var masked = false
        /// How far the input is copied into ``output``.
        var copied = 0
        /// How many masked values the scanner is inside: their own keys are not looked at.
        var inMasked = 0
        /// How many strings deep the document is.
        var embeddedDepth = 0

        init(bytes: UnsafeBufferPointer<UInt8>, isMasked: @escaping (String) -> Bool, maskText: @escaping (String) -> String) {
            self.bytes = bytes
            self.isMasked = isMasked
            self.maskText = maskText
        }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        mutating func value(depth: Int) -> Bool {
            guard let byte = current else { return false }
            switch byte {
            case UInt8(ascii: "{"): return object(depth: depth + 1)
            case UInt8(ascii: "["): return array(depth: depth + 1)
            case UInt8(ascii: "\""): return stringValue(depth: depth)
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            default: return number()
            }
        }

        mutating func object(depth: Int) -> Bool {
            guard depth <= JSONMasking.maxDepth else { return false }
            index += 1
            skipWhitespace()
            if current == UInt8(ascii: "}") {
                index += 1
                return true
            }
            while true {
                skipWhitespace()
                let keyStart = index
                guard current == UInt8(ascii: "\""), let key = string(decoding: inMasked == 0) else { return false }
                // A key is text too (`{"https://user:pass@h/": 1}`).
                if inMasked == 0 {
                    let shown = maskText(key)
                    if shown != key { replace(keyStart..<index, with: Self.quoted(Array(shown.utf8))) }
                }
                skipWhitespace()
                guard current == UInt8(ascii: ":") else { return false }
                index += 1
                skipWhitespace()
                let start = index
                let masks = inMasked == 0 && isMasked(key)
                if masks { inMasked += 1 }
                guard value(depth: depth) else { return false }
                if masks {
                    inMasked -= 1
                    replace(start..<index)
                }
                skipWhitespace()
                switch current {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "}"):
                    index += 1
                    return true
                default: return false
                }
            }
        }

        mutating func array(depth: Int) -> Bool {
            guard depth <= JSONMasking.maxDepth else { return false }
            index += 1
            skipWhitespace()
            if current == UInt8(ascii: "]") {
                index += 1
                return true
            }
            while true {
                skipWhitespace()
                guard value(depth: depth) else { return false }
                skipWhitespace()
                switch current {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "]"):
                    index += 1
                    return true
                default: return false
                }
            }
        }

        /// Reads a string value; one that holds JSON (after spaces or a byte order mark, or as a
        /// JSON string of its own) is masked as a document of its own, any other as ``maskText``
        /// shows it.
        mutating func stringValue(depth: Int) -> Bool {
            let start = index
            let decodes = inMasked == 0
            guard let text = string(decoding: decodes) else { return false }
            guard decodes else { return true }
            var document = Array(text.utf8)[...]
            while let first = document.first, Self.isWhitespace(first) { document = document.dropFirst() }
            if document.starts(with: [0xEF, 0xBB, 0xBF]) { document = document.dropFirst(3) }
            while let last = document.last, Self.isWhitespace(last) { document = document.dropLast() }
            let first = document.first, last = document.last
            let isContainer =
                (first == UInt8(ascii: "{") && last == UInt8(ascii: "}")) || (first == UInt8(ascii: "[") && last == UInt8(ascii: "]"))
            let isString = document.count >= 2 && first == UInt8(ascii: "\"") && last == UInt8(ascii: "\"")
            if isContainer || isString {
                let outcome =
                    embeddedDepth >= JSONMasking.maxEmbeddedDepth
                    ? .invalid
                    : Array(document).withUnsafeBufferPointer {
                        JSONMasking.mask($0, embeddedDepth: embeddedDepth + 1, depth: depth, isMasked: isMasked, maskText: maskText)
                    }
                switch outcome {
                case .unchanged: return true
                case .masked(let inner):
                    replace(start..<index, with: Self.quoted(inner))
                    return true
                case .invalid where isContainer:
                    replace(start..<index)
                    return true
                case .invalid: break  // Quotes around text: read as text.
                }
            }
            let shown = maskText(text)
            if shown != text { replace(start..<index, with: Self.quoted(Array(shown.utf8))) }
            return true
        }

        static func isWhitespace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
        }

        /// `bytes` (valid UTF-8) as a JSON string.
        static func quoted(_ bytes: [UInt8]) -> [UInt8] {
            var result: [UInt8] = [UInt8(ascii: "\"")]
            result.reserveCapacity(bytes.count + 2)
            let hex = Array("0123456789abcdef".utf8)
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): result += [UInt8(ascii: "\\"), byte]
                case 0x00..<0x20: result += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
                default: result.append(byte)
                }
            }
            result.append(UInt8(ascii: "\""))
            return result
        }

        /// Writes the masked value in place of `range`.
        /// Appended in place: each masked value costs the bytes before it once, so a document of
        /// many masked values is masked in time linear in its size.
        mutating func replace(_ range: Range<Int>, with replacement: [UInt8] = JSONMasking.replacement) {
            if !masked {
                masked = true
                output.reserveCapacity(bytes.count)
            }
            output.append(contentsOf: bytes[copied..<range.lowerBound])
            output.append(contentsOf: replacement)
            copied = range.upperBound
        }

        mutating func literal(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard bytes.count - index >= count else { return false }
            for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] { return false }
            index += count
            return true
        }

        mutating func number() -> Bool {
            if current == UInt8(ascii: "-") { index += 1 }
            if current == UInt8(ascii: "0") {
                index += 1
            } else {
                guard digits() else { return false }
            }
            if current == UInt8(ascii: ".") {
                index += 1
                guard digits() else { return false }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard digits() else { return false }
            }
            return true
        }

        /// One or more decimal digits.
        mutating func digits() -> Bool {
            let start = index
            while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
            return index > start
        }

        /// Reads a string at `index` (its opening quote); its decoded text when `decoding`, else
        /// an empty one; `nil` when it breaks the grammar.
        mutating func string(decoding: Bool) -> String? {
            index += 1
            var text: [UInt8] = []
            while let byte = current {
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return decoding ? String(decoding: text, as: UTF8.self) : ""
                case UInt8(ascii: "\\"):
                    guard let escaped = current else { return nil }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escaped)
                    case UInt8(ascii: "b"): text.append(0x08)
                    case UInt8(ascii: "f"): text.append(0x0C)
                    case UInt8(ascii: "n"): text.append(0x0A)
                    case UInt8(ascii: "r"): text.append(0x0D)
                    case UInt8(ascii: "t"): text.append(0x09)
                    case UInt8(ascii: "u"):
                        guard let unit = hexUnit(), let scalar = scalar(startingWith: unit) else { return nil }
                        if decoding { text.append(contentsOf: Array(String(Character(scalar)).utf8)) }
                    default: return nil
                    }
                case 0x00..<0x20:
                    return nil
                case 0x80...:
                    // Valid UTF-8 only: what a lenient reader could read as another key is refused.
                    let start = index - 1
                    guard let length = utf8Sequence(at: start) else { return nil }
                    if decoding { text.append(contentsOf: bytes[start..<start + length]) }
                    index = start + length
                default:
                    if decoding { text.append(byte) }
                }
            }
            return nil
        }

        /// Four hex digits after `\u`.
        mutating func hexUnit() -> UInt16? {
            guard bytes.count - index >= 4 else { return nil }
            var unit: UInt16 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                unit = unit << 4 | UInt16(digit)
                index += 1
            }
            return unit
        }

        /// The character an escape starting with `unit` stands for, reading the low surrogate after
        /// a high one; `nil` for a lone surrogate.
        mutating func scalar(startingWith unit: UInt16) -> Unicode.Scalar? {
            switch unit {
            case 0xD800..<0xDC00:
                guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    return nil
                }
                index += 2
                guard let low = hexUnit(), (0xDC00..<0xE000).contains(low) else { return nil }
                return Unicode.Scalar(0x10000 + (UInt32(unit) - 0xD800) << 10 + (UInt32(low) - 0xDC00))
            case 0xDC00..<0xE000:
                return nil
            default:
                return Unicode.Scalar(unit)
            }
        }

        /// The length of the well-formed UTF-8 sequence at `start` (RFC 3629: no overlong forms,
        /// no surrogates, nothing past U+10FFFF), or `nil`.
        func utf8Sequence(at start: Int) -> Int? {
            let lead = bytes[start]
            let length: Int
            var lower: UInt8 = 0x80
            var upper: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; lower = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; upper = 0x9F
            case 0xF0: length = 4; lower = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; upper = 0x8F
            default: return nil
            }
            guard bytes.count - start >= length else { return nil }
            for offset in 1..<length {
                let byte = bytes[start + offset]
                let (low, high) = offset == 1 ? (lower, upper) : (UInt8(0x80), UInt8(0xBF))
                guard byte >= low, byte <= high else { return nil }
            }
            return length
        }
    }
}
