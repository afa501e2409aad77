import Foundation

extension Redactor {
    /// An event stream (`text/event-stream`) with the masked keys of each `data` line's JSON
    /// replaced, `event` and `id` values masked as text (``maskedText(_:)``) and comments emptied, its lines read as the event stream rules read them (CR, LF
    /// or CRLF, one leading BOM) and written with LF; `nil` when a line is anything but a blank
    /// line, a comment, `event`, `id`, a `retry` of digits or `data` holding JSON, so that it is
    /// never kept as it is.
    func maskedEventStream(_ body: Data) -> Data? {
        var bytes = body[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        var result = Data()
        result.reserveCapacity(bytes.count)
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") } ?? bytes.endIndex
            guard let masked = maskedEventLine(Data(bytes[start..<end])) else { return nil }
            result.append(masked)
            guard end < bytes.endIndex else { break }
            result.append(UInt8(ascii: "\n"))
            start = bytes.index(after: end)
            if bytes[end] == UInt8(ascii: "\r"), start < bytes.endIndex, bytes[start] == UInt8(ascii: "\n") {
                start = bytes.index(after: start)
            }
        }
        return result
    }

    /// One line of an event stream, masked; `nil` when it cannot be kept.
    private func maskedEventLine(_ line: Data) -> Data? {
        if line.isEmpty { return line }
        if line.first == UInt8(ascii: ":") { return Data(":".utf8) }
        let colon = line.firstIndex(of: UInt8(ascii: ":"))
        let name = String(decoding: line[..<(colon ?? line.endIndex)], as: UTF8.self)
        var value = colon.map { line[line.index(after: $0)...] } ?? line[line.endIndex...]
        if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        switch name {
        case "event", "id":
            // Text: a URL in it loses its userinfo, a form its masked values.
            guard let text = String(validating: value, as: UTF8.self) else { return nil }
            let shown = maskedText(text)
            return shown == text ? line : Data("\(name): \(shown)".utf8)
        case "retry":
            return value.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } ? line : nil
        case "data":
            guard !value.isEmpty else { return line }
            return maskedJSONDocument(Data(value)).map { Data("data: ".utf8) + $0 }
        default:
            return nil
        }
    }

    /// JSON Lines with the masked keys of each line replaced; blank lines kept; `nil` when a line
    /// is not JSON.
    func maskedJSONLines(_ body: Data) -> Data? {
        maskedLines(body) { line in
            line.allSatisfy { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") } ? line : maskedJSONDocument(line)
        }
    }

    /// `body` line by line (LF; a CR before it kept), each line replaced by `mask`'s, or `nil`
    /// as soon as one cannot be masked.
    private func maskedLines(_ body: Data, _ mask: (Data) -> Data?) -> Data? {
        var result = Data()
        result.reserveCapacity(body.count)
        var start = body.startIndex
        while start < body.endIndex {
            let end = body[start...].firstIndex(of: UInt8(ascii: "\n")) ?? body.endIndex
            var line = body[start..<end]
            let hasCR = line.last == UInt8(ascii: "\r")
            if hasCR { line = line.dropLast() }
            guard let masked = mask(Data(line)) else { return nil }
            result.append(masked)
            if hasCR { result.append(UInt8(ascii: "\r")) }
            if end < body.endIndex { result.append(UInt8(ascii: "\n")) }
            start = end < body.endIndex ? body.index(after: end) : end
        }
        return result
    }
}
