import Foundation

extension Redactor {
    /// An event stream (`text/event-stream`) with the masked keys of each `data` line's JSON
    /// replaced and comments emptied; `nil` when a `data` line is not JSON, so that it is never
    /// kept as it is. Line ends (LF or CRLF) are kept.
    func maskedEventStream(_ body: Data) -> Data? {
        maskedLines(body) { line in
            if line.first == UInt8(ascii: ":") { return Data(":".utf8) }
            guard line.starts(with: "data".utf8) else { return line }
            var value = line.dropFirst(4)
            guard value.isEmpty || value.first == UInt8(ascii: ":") else { return line }
            value = value.dropFirst()
            if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
            guard !value.isEmpty else { return line }
            return maskedJSONDocument(Data(value)).map { Data("data: ".utf8) + $0 }
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
