import Foundation
import NIOCore

/// Writes fields as a `multipart/form-data` body (RFC 7578).
struct MultipartBody {
    let boundary: String

    init(boundary: String = MultipartBody.randomBoundary()) {
        self.boundary = boundary
    }

    var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    static func randomBoundary() -> String {
        "resourceful-" + String(UInt64.random(in: .min ... .max), radix: 16) + String(UInt64.random(in: .min ... .max), radix: 16)
    }

    func encode(_ fields: [FormField]) -> ByteBuffer {
        var buffer = ByteBuffer()
        for field in fields {
            buffer.writeString("--\(boundary)\r\n")
            var disposition = "Content-Disposition: form-data; name=\"\(Self.escape(field.name))\""
            switch field.value {
            case .text(let text):
                buffer.writeString(disposition + "\r\n\r\n")
                buffer.writeString(text)
            case .list(let values):
                buffer.writeString(disposition + "\r\n\r\n")
                buffer.writeString(values.joined(separator: ","))
            case .file(let file):
                disposition += "; filename=\"\(Self.escape(file.filename))\""
                buffer.writeString(disposition + "\r\n")
                buffer.writeString("Content-Type: \(Self.escape(file.contentType))\r\n\r\n")
                buffer.writeBytes(file.data)
            }
            buffer.writeString("\r\n")
        }
        buffer.writeString("--\(boundary)--\r\n")
        return buffer
    }

    /// Escapes a name as the HTML standard does for form data: `"` → `%22`, CR → `%0D`, LF → `%0A`.
    static func escape(_ text: String) -> String {
        guard text.contains(where: { $0 == "\"" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "%22"
            case "\r": result += "%0D"
            case "\n": result += "%0A"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
