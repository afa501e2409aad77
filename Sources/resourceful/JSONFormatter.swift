/// Pretty prints JSON text as the server sent it: keys in its order, numbers with their exact
/// digits (an integer beyond 64 bits or a decimal such as `1.10` is never rounded), strings with
/// their escapes, two spaces of indentation and `"key": value`.
///
/// Characters that could drive a terminal (C1 controls, DEL, bidirectional overrides and other
/// format characters) are written as `\uXXXX` escapes, which keeps the document's value. The
/// formatter works on a copy of the bytes without recursion, so any depth is safe, and writes in
/// pieces of a few KiB. Indentation cannot multiply a body into an enormous output: a document
/// nested deeper than ``maxDepth``, or whose indented form (colours aside, which add a few bytes
/// a token) would be larger than ``maxOutputBytes(forBodyOf:)`` (four times the body and 64 KiB),
/// is not formatted
/// (``format(_:colours:to:)`` returns false and the caller prints the body as it is).
struct JSONFormatter {
    /// How deep a document may nest and still be indented.
    static let maxDepth = 64

    /// The largest indented form written for a body of `count` bytes: four times it and 64 KiB.
    static func maxOutputBytes(forBodyOf count: Int) -> Int {
        count > (Int.max - 64 * 1024) / 4 ? Int.max : 4 * count + 64 * 1024
    }

    /// The terminal colours of each kind of token (ANSI SGR parameters).
    enum Colour {
        static let key = "34;1"
        static let string = "32"
        static let number = "36"
        static let literal = "35"
    }

    /// Whether `bytes` is one JSON document (RFC 8259, UTF-8), with no more than ``maxDepth``
    /// levels.
    static func isJSON(_ bytes: [UInt8]) -> Bool {
        outputSize(bytes, colours: false) != nil
    }

    /// The size in bytes of `bytes` pretty printed, without writing it; `nil` when `bytes` is not
    /// one JSON document of at most ``maxDepth`` levels.
    static func outputSize(_ bytes: [UInt8], colours: Bool) -> Int? {
        var formatter = JSONFormatter(bytes: bytes, colours: colours, sink: nil)
        return formatter.run() ? formatter.size : nil
    }

    /// Writes `bytes` pretty printed to `write`, in pieces of a few KiB, and returns true; or
    /// returns false, having written nothing, when `bytes` is not one JSON document of at most
    /// ``maxDepth`` levels or its indented form, without colours, would be larger than
    /// ``maxOutputBytes(forBodyOf:)``. `write` returns false to stop the writing (standard
    /// output closed): nothing more is handed to it, and `format` still returns true.
    static func format(_ bytes: [UInt8], colours: Bool, to write: ([UInt8]) -> Bool) -> Bool {
        // Colours add a few bytes a token, whatever the nesting: the bound is on the indentation.
        guard let size = outputSize(bytes, colours: false), size <= maxOutputBytes(forBodyOf: bytes.count) else { return false }
        return withoutActuallyEscaping(write) { write in
            var formatter = JSONFormatter(bytes: bytes, colours: colours, sink: write)
            let done = formatter.run()
            formatter.flush()
            return done
        }
    }

    /// The first `maxBytes` or a little more (up to the end of the token that passes them) of
    /// `bytes` pretty printed, without colours, and how many of the body's bytes that leaves
    /// unread; `nil` when `bytes` is not JSON. Formatting stops there, whatever the body's size
    /// and nesting: it costs what is shown, not what the whole document would indent to.
    static func prefix(_ bytes: [UInt8], maxBytes: Int) -> (text: [UInt8], unread: Int)? {
        guard isJSON(bytes) else { return nil }
        var output: [UInt8] = []
        let unread = withoutActuallyEscaping({ (piece: [UInt8]) -> Bool in
            output.append(contentsOf: piece)
            return true
        }) { write in
            var formatter = JSONFormatter(bytes: bytes, colours: false, sink: write, limit: maxBytes)
            _ = formatter.run()
            formatter.flush()
            return formatter.stopped ? bytes.count - formatter.index : 0
        }
        return (output, unread)
    }

    /// `bytes` pretty printed as a string, or `nil` when it is not JSON (or would be larger than
    /// ``maxOutputBytes(forBodyOf:)`` indented).
    static func formatted(_ bytes: [UInt8], colours: Bool = false) -> String? {
        var output: [UInt8] = []
        guard format(bytes, colours: colours, to: { output.append(contentsOf: $0); return true }) else { return nil }
        return String(decoding: output, as: UTF8.self)
    }

    private let bytes: [UInt8]
    private let colours: Bool
    private let sink: (([UInt8]) -> Bool)?
    /// How many bytes of output end the run (``prefix(_:maxBytes:)``).
    private let limit: Int
    private var index = 0
    private var output: [UInt8] = []
    /// The bytes of output so far, written or (without a sink) only counted.
    private var size = 0
    /// Whether the run ended early: the limit reached, or the sink said to stop.
    private var stopped = false
    /// Whether the sink said to stop: nothing more is handed to it.
    private var refused = false

    private init(bytes: [UInt8], colours: Bool, sink: (([UInt8]) -> Bool)?, limit: Int = .max) {
        self.bytes = bytes
        self.colours = colours
        self.sink = sink
        self.limit = limit
    }

    private enum Expect { case value, key, afterValue }

    /// Reads the whole document, writing it when there is a sink; whether it is JSON.
    private mutating func run() -> Bool {
        // true for an object, false for an array.
        var stack: [Bool] = []
        var expect = Expect.value
        while !stopped {
            skipWhitespace()
            switch expect {
            case .value:
                guard index < bytes.count else { return false }
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    let isObject = byte == UInt8(ascii: "{")
                    let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
                    index += 1
                    skipWhitespace()
                    if index < bytes.count, bytes[index] == close {
                        index += 1
                        emit([byte, close])
                        expect = .afterValue
                        continue
                    }
                    guard stack.count < Self.maxDepth else { return false }
                    stack.append(isObject)
                    emit(byte)
                    newline(depth: stack.count)
                    expect = isObject ? .key : .value
                case UInt8(ascii: "\""):
                    guard string(colour: Colour.string) else { return false }
                    expect = .afterValue
                case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                    guard literal() else { return false }
                    expect = .afterValue
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    guard number() else { return false }
                    expect = .afterValue
                default:
                    return false
                }
            case .key:
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), string(colour: Colour.key) else { return false }
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return false }
                index += 1
                emit(Array(": ".utf8))
                expect = .value
            case .afterValue:
                guard let isObject = stack.last else { return index == bytes.count }
                guard index < bytes.count else { return false }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    emit(UInt8(ascii: ","))
                    newline(depth: stack.count)
                    expect = isObject ? .key : .value
                } else if bytes[index] == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    index += 1
                    stack.removeLast()
                    newline(depth: stack.count)
                    emit(isObject ? UInt8(ascii: "}") : UInt8(ascii: "]"))
                } else {
                    return false
                }
            }
        }
        return true
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// `true`, `false` or `null`.
    private mutating func literal() -> Bool {
        for word in ["true", "false", "null"] {
            let utf8 = Array(word.utf8)
            if bytes.count - index >= utf8.count, Array(bytes[index..<index + utf8.count]) == utf8 {
                index += utf8.count
                coloured(utf8[...], Colour.literal)
                return true
            }
        }
        return false
    }

    /// A number, checked against JSON's grammar and written with its digits as they are.
    private mutating func number() -> Bool {
        let start = index
        func digits() -> Int {
            let from = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - from
        }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { return false }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if digits() == 0 {
            return false
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { return false }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { return false }
        }
        coloured(bytes[start..<index], Colour.number)
        return true
    }

    /// A string, checked (escapes, no raw control character, UTF-8) and written with its escapes
    /// as they are; characters that could drive a terminal become `\uXXXX`.
    private mutating func string(colour: String) -> Bool {
        let start = index
        var ascii = true
        index += 1
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") { break }
            if byte < 0x20 { return false }
            if byte >= 0x7F { ascii = false }
            if byte == UInt8(ascii: "\\") {
                index += 1
                guard index < bytes.count else { return false }
                switch bytes[index] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                    UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    index += 1
                case UInt8(ascii: "u"):
                    guard bytes.count - index > 4, bytes[index + 1...index + 4].allSatisfy({ Self.isHexDigit($0) }) else { return false }
                    index += 5
                default:
                    return false
                }
            } else {
                index += 1
            }
        }
        guard index < bytes.count else { return false }
        index += 1
        if ascii {
            // Printable ASCII only: written as it is.
            coloured(bytes[start..<index], colour)
            return true
        }
        guard let text = String(validating: bytes[start..<index], as: UTF8.self) else { return false }
        guard sink != nil else {
            // Only counted: what the escapes below make of it, and the colour around it.
            size += text.unicodeScalars.reduce(0) { $0 + (TerminalText.isUnsafe($1) ? 6 * $1.utf16.count : $1.utf8.count) }
            if colours { size += "\u{1B}[\(colour)m\u{1B}[0m".utf8.count }
            return true
        }
        var safe: [UInt8] = []
        safe.reserveCapacity(index - start)
        for scalar in text.unicodeScalars {
            if TerminalText.isUnsafe(scalar) {
                for unit in String(scalar).utf16 {
                    let hex = String(unit, radix: 16)
                    safe.append(contentsOf: Array(("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8))
                }
            } else {
                safe.append(contentsOf: Array(String(scalar).utf8))
            }
        }
        coloured(safe[...], colour)
        return true
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }

    private mutating func coloured(_ token: ArraySlice<UInt8>, _ colour: String) {
        guard colours else { return emit(token) }
        emit(Array("\u{1B}[\(colour)m".utf8)[...])
        emit(token)
        emit(Array("\u{1B}[0m".utf8)[...])
    }

    private mutating func newline(depth: Int) {
        size += 1 + 2 * depth
        guard sink != nil else { return }
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * depth))
        wrote()
    }

    private mutating func emit(_ byte: UInt8) {
        size += 1
        guard sink != nil else { return }
        output.append(byte)
        wrote()
    }

    private mutating func emit(_ piece: [UInt8]) {
        emit(piece[...])
    }

    private mutating func emit(_ piece: ArraySlice<UInt8>) {
        size += piece.count
        guard sink != nil else { return }
        output.append(contentsOf: piece)
        wrote()
    }

    /// After a piece of output: the run stops at the limit, and a few KiB go to the sink.
    private mutating func wrote() {
        if size >= limit { stopped = true }
        if output.count >= 1 << 16 { flush() }
    }

    /// Hands what is written so far to the sink, unless it said to stop.
    private mutating func flush() {
        guard let sink, !output.isEmpty, !refused else { return }
        if !sink(output) { (refused, stopped) = (true, true) }
        output.removeAll(keepingCapacity: true)
    }
}
