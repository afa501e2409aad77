import Foundation
import HTTPTypes
import Resourceful

#if canImport(Glibc)
import Glibc
#endif

/// `--include`: writes the status line and header fields of each answer the call's last step
/// receives to standard output, before the body, each value masked as the log masks it and
/// escaped as ``TerminalText`` escapes a server's text. The outermost step, so it sees the answer
/// a call ends with (after retries and redirects); a download resumed on a new connection prints
/// the head of each connection's answer, as curl does.
struct ResponseHeadPrinter: APIMiddleware {
    /// The masking rules of the configuration.
    let redactor: Redactor

    init(logging: APIConfig.LogSettings) {
        redactor = Redactor(settings: logging)
    }

    func intercept(
        _ request: TransportRequest,
        context: CallContext,
        next: (TransportRequest, CallContext) async throws -> TransportResponse
    ) async throws -> TransportResponse {
        let response = try await next(request, context)
        // A failure (the reader gone, a full disk) is not this step's to report: the body's
        // write that follows meets it too, and a download goes on to its end.
        StandardStreams.write(Array(head(of: response).utf8), to: STDOUT_FILENO)
        return response
    }

    /// `HTTP/1.1 200 OK` (as curl writes it; `HTTP 200 OK` when the version is not known, as
    /// for an answer replayed from a recording), then one `Name: value` line a field, then an
    /// empty line.
    func head(of response: TransportResponse) -> String {
        var text = "\(Self.printable(response.httpVersion ?? "HTTP")) \(response.status.code) \(Self.printable(response.status.reasonPhrase))\n"
        for field in response.headerFields {
            text += "\(Self.printable(field.name.rawName)): \(Self.printable(redactor.headerValue(field.name, field.value)))\n"
        }
        return text + "\n"
    }

    /// `text` on one line, with every character a terminal would act on (controls, line ends,
    /// bidirectional overrides, zero-width and other format characters) written as an escape.
    static func printable(_ text: String) -> String {
        TerminalText.escaped(text).replacingOccurrences(of: "\n", with: "\\x0a")
    }
}
