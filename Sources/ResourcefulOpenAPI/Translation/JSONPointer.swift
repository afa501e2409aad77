internal import Foundation

/// A JSON pointer (RFC 6901) into the document, as diagnostics name places: `#/components/schemas/Pet`.
struct JSONPointer: Sendable, Hashable, CustomStringConvertible {
    private(set) var tokens: [String]

    static let root = JSONPointer(tokens: [])

    /// The pointer one level down.
    func appending(_ token: String) -> JSONPointer {
        JSONPointer(tokens: tokens + [token])
    }

    func appending(_ token: Int) -> JSONPointer {
        appending(String(token))
    }

    var description: String {
        "#" + tokens.map { "/" + $0.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1") }.joined()
    }
}
