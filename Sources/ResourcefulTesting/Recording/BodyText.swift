import Foundation
import Resourceful

/// How a body is kept in a HAR file: as text when it is text, else base64, so that every body
/// comes back byte for byte.
enum BodyText {
    /// The text and HAR `encoding` for `data` of media type `mimeType`.
    static func encode(_ data: Data, mimeType: String?) -> (text: String, encoding: String?) {
        if isText(mimeType), let text = String(data: data, encoding: .utf8), !text.utf8.contains(0) {
            return (text, nil)
        }
        return (data.base64EncodedString(), "base64")
    }

    /// The bytes a HAR `text` with `encoding` stands for, or `nil` when base64 does not decode.
    static func decode(_ text: String?, encoding: String?) -> Data? {
        guard let text else { return Data() }
        if encoding?.lowercased() == "base64" {
            return Data(base64Encoded: text, options: .ignoreUnknownCharacters)
        }
        return Data(text.utf8)
    }

    /// Whether a media type is kept as text.
    static func isText(_ mimeType: String?) -> Bool {
        guard let mimeType else { return false }
        let essence = MediaType.essence(of: mimeType)
        return essence.hasPrefix("text/") || MediaType.isJSON(mimeType) || essence.hasSuffix("xml") || MediaType.isForm(mimeType)
            || essence == "application/javascript" || essence == "multipart/form-data"
    }
}
