import Foundation
import HTTPTypes

/// Reads `Link` header fields (RFC 8288).
enum LinkHeader {
    static let name = HTTPField.Name.link

    /// The target of the first link with relation type `next`.
    static func next(in values: [String]) -> String? {
        for value in values {
            for link in split(value) {
                guard let open = link.firstIndex(of: "<"), let close = link[open...].firstIndex(of: ">") else { continue }
                let target = String(link[link.index(after: open)..<close])
                let parameters = link[link.index(after: close)...].split(separator: ";")
                for parameter in parameters {
                    let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                    guard pair.count == 2, pair[0].lowercased() == "rel" else { continue }
                    let relations = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")).lowercased().split(separator: " ")
                    if relations.contains("next") { return target }
                }
            }
        }
        return nil
    }

    /// Splits a field value at the commas between links (not those inside `<…>` or quotes).
    private static func split(_ value: String) -> [Substring] {
        var parts: [Substring] = []
        var start = value.startIndex
        var inTarget = false
        var inQuotes = false
        for index in value.indices {
            switch value[index] {
            case "<" where !inQuotes: inTarget = true
            case ">" where !inQuotes: inTarget = false
            case "\"" where !inTarget: inQuotes.toggle()
            case "," where !inTarget && !inQuotes:
                parts.append(value[start..<index])
                start = value.index(after: index)
            default: break
            }
        }
        parts.append(value[start...])
        return parts
    }
}
