package import Foundation

/// Masks the values of `multipart/form-data` parts whose names are masked.
package enum MultipartMasking {
    /// The `boundary` parameter of a `multipart/form-data` media type.
    package static func boundary(of contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "boundary" else { continue }
            let value = pair[1].trimmingCharacters(in: .whitespaces)
            return value.hasPrefix("\"") && value.hasSuffix("\"") && value.count >= 2 ? String(value.dropFirst().dropLast()) : value
        }
        return nil
    }

    /// `body` with the content of each part whose `name` is masked replaced by `***`.
    package static func mask(_ body: Data, boundary: String, isMasked: (String) -> Bool) -> Data {
        let delimiter = Data("--\(boundary)".utf8)
        let headerEnd = Data("\r\n\r\n".utf8)
        var result = Data()
        var position = body.startIndex
        while let found = body.range(of: delimiter, in: position..<body.endIndex) {
            // Up to and including the delimiter, as it was.
            let partStart = found.upperBound
            let next = body.range(of: delimiter, in: partStart..<body.endIndex)
            guard let next else {
                result.append(body[position...])
                return result
            }
            result.append(body[position..<partStart])
            let part = body[partStart..<next.lowerBound]
            if let headers = part.range(of: headerEnd),
                let name = partName(String(decoding: part[part.startIndex..<headers.lowerBound], as: UTF8.self)),
                isMasked(name)
            {
                result.append(part[part.startIndex..<headers.upperBound])
                result.append(Data("***\r\n".utf8))
            } else {
                result.append(part)
            }
            position = next.lowerBound
        }
        result.append(body[position...])
        return result
    }

    /// The `name` of a part's `Content-Disposition`.
    private static func partName(_ headers: String) -> String? {
        var searched = headers.startIndex
        while let range = headers.range(of: "name=\"", range: searched..<headers.endIndex) {
            searched = range.upperBound
            // `filename="…"` is not the name.
            guard range.lowerBound > headers.startIndex, [" ", ";"].contains(headers[headers.index(before: range.lowerBound)]) else { continue }
            let rest = headers[range.upperBound...]
            guard let end = rest.firstIndex(of: "\"") else { return nil }
            return String(rest[..<end])
        }
        return nil
    }
}
