import Foundation

/// What a `Content-Type` value says, read one way everywhere (validation, redaction, recordings).
package enum MediaType {
    /// The media type of `contentType`, lower-cased, without parameters: `application/json` for
    /// `Application/JSON; charset=utf-8`.
    package static func essence(of contentType: String) -> Substring {
        let end = contentType.firstIndex(of: ";") ?? contentType.endIndex
        return Substring(contentType[..<end].trimmingCharacters(in: .whitespaces).lowercased())
    }

    /// Whether `contentType` is JSON: `application/json` or any `…+json` type
    /// (`application/problem+json`, `application/vnd.api+json`).
    package static func isJSON(_ contentType: String) -> Bool {
        let essence = essence(of: contentType)
        return essence == "application/json" || essence.hasSuffix("+json")
    }

    /// Whether `contentType` is a form body.
    package static func isForm(_ contentType: String) -> Bool {
        essence(of: contentType) == "application/x-www-form-urlencoded"
    }
}
