import Foundation
import HTTPTypes
import NIOCore
import NIOFoundationEssentialsCompat

/// A request as a `curl` command, for a terminal or a ticket: every masked value replaced, the
/// URL without its userinfo, and nothing curl would read as a file name or a pattern: the body is
/// given with `--data-raw` (curl reads a `--data-binary` or `--data` value starting with `@` as a
/// file to send), and a URL holding `[`, `]`, `{` or `}` is given with `--globoff` (curl expands
/// them into many URLs otherwise). Header lines start with the field's name, which cannot start
/// with `@` (curl's way to read headers from a file).
struct CURLCommand {
    let redactor: Redactor

    /// The command for `request`, one option per line.
    func render(_ request: TransportRequest) -> String {
        var lines: [String] = []
        var command = "curl"
        if request.method != .get || request.body != nil { command += " --request " + Self.word(request.method.rawValue) }
        let url = redactor.maskedURL(request.target)
        if url.contains(where: { "[]{}".contains($0) }) { command += " --globoff" }
        command += " " + Self.quote(url)
        lines.append(command)
        for field in request.headerFields {
            lines.append("--header " + Self.quote("\(field.name.rawName): \(redactor.headerValue(field.name, field.value))"))
        }
        var note: String?
        if let streamed = request.body, streamed.bytes == nil {
            note =
                "# The body (\(streamed.length.map { "\($0) bytes" } ?? "size unknown")) is left out: it is streamed. Save it as request-body.bin."
            lines.append("--data-binary @request-body.bin")
        } else if let body = request.body?.bytes, body.readableBytes > 0 {
            let contentType = request.headerFields[.contentType]
            let masked =
                request.shouldRedactRequestBody
                ? nil : redactor.maskedBody(Data(buffer: body, byteTransferStrategy: .noCopy), contentType: contentType)
            if let masked, let text = String(data: masked, encoding: .utf8), !text.utf8.contains(0) {
                lines.append("--data-raw " + Self.quote(text))
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

    /// `text` as it is when it holds only letters and digits (`POST`), else quoted: a method is a
    /// token, and a token may hold `|`, `&`, `'` or a backquote, which a shell would read.
    static func word(_ text: String) -> String {
        text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } ? text : quote(text)
    }

    /// `text` in single quotes, for any POSIX shell.
    static func quote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}

extension API {
    /// The request a call of `request` would send, as a `curl` command to paste into a terminal or
    /// a ticket: method, URL, header fields and body, one option per line, with every value the
    /// logger masks (``APIConfig/LogSettings``) replaced by `***`: the `Authorization` value,
    /// masked header fields, query values and JSON, form and multipart fields. A body that is not
    /// text is left out, with a line saying so.
    ///
    /// ```swift
    /// print(try await api.curl(for: CreateCharge(amount: 500)))
    /// // curl --request POST 'https://api.example.com/v1/charges?expand%5B%5D=customer' \
    /// //   --header 'Authorization: ***' \
    /// //   …
    /// ```
    ///
    /// - Throws: ``APIError``, as ``call(_:)`` would when building the same request.
    public func curl<Request: ResourceRequest>(for request: Request) async throws(APIError) -> String {
        CURLCommand(redactor: defaultOptions.redactor).render(try await transportRequest(for: request))
    }
}
