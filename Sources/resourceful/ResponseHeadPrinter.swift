import Foundation
import HTTPTypes
import Resourceful

/// `--include`: writes the answer's status line and header fields to standard output before its
/// body, each value masked as the log masks it. The outermost step, so it sees the answer the
/// call ends with (after retries and redirects), once.
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
        FileHandle.standardOutput.write(Data(head(of: response).utf8))
        return response
    }

    /// `HTTP 200 OK`, then one `Name: value` line a field, then an empty line.
    func head(of response: TransportResponse) -> String {
        var text = "HTTP \(response.status.code) \(Self.printable(response.status.reasonPhrase))\n"
        for field in response.headerFields {
            text += "\(field.name.rawName): \(Self.printable(redactor.headerValue(field.name, field.value)))\n"
        }
        return text + "\n"
    }

    /// `text` without control characters, which a terminal would act on.
    static func printable(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0 != "\t" && $0.properties.generalCategory == .control ? "?" : $0 }))
    }
}
