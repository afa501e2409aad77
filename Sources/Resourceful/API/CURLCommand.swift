import Foundation
import HTTPTypes
import NIOCore
import NIOFoundationEssentialsCompat

/// A request as a `curl` command, for a terminal or a ticket: every masked value replaced.
struct CURLCommand {
    let redactor: Redactor

    /// The command for `request`, one option per line.
    func render(_ request: TransportRequest) -> String {
        var lines: [String] = []
        var command = "curl"
        if request.method != .get || request.body != nil { command += " --request " + request.method.rawValue }
        command += " " + Self.quote(redactor.maskedURL(request.target))
        lines.append(command)
        for field in request.headerFields {
            lines.append("--header " + Self.quote("\(field.name.rawName): \(redactor.headerValue(field.name, field.value))"))
        }
        var note: String?
        if let streamed = request.body, streamed.bytes == nil {
            note = "# The body (\(streamed.length.map { "\($0) bytes" } ?? "size unknown")) is left out: it is streamed. Save it as request-body.bin."
            lines.append("--data-binary @request-body.bin")
        } else if let body = request.body?.bytes, body.readableBytes > 0 {
            let contentType = request.headerFields[.contentType]
            let masked =
                request.shouldRedactRequestBody
                ? nil : redactor.maskedBody(Data(buffer: body, byteTransferStrategy: .noCopy), contentType: contentType)
            if let masked, let text = String(data: masked, encoding: .utf8), !text.utf8.contains(0) {
                lines.append("--data-binary " + Self.quote(text))
            } else {
                let reason =
                    request.shouldRedactRequestBody
                    ? "the request redacts its body" : masked == nil ? "it cannot be masked" : "it is not text"
                note = "# The body (\(body.readableBytes) bytes) is left out: \(reason). Save it as request-body.bin."
                lines.append("--data-binary @request-body.bin")
            }
        }
        let joined = lines.joined(separator: " \\\n  ")
        return note.map { $0 + "\n" + joined } ?? joined
    }

    /// `text` in single quotes, for any POSIX shell.
    static func quote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}
