import Foundation
import HTTPTypes
import NIOCore
import NIOFoundationCompat
import Resourceful

/// Turns an exchange into a HAR entry with every secret masked by the API's redaction rules
/// (``APIConfig/redaction``): header values, every URL in any header value (`Location`, `Link`,
/// `Refresh`, `Referer`, an `X-Callback-Url`), query values and path parameters, JSON fields at
/// any depth and the URLs and forms inside JSON strings, form fields, and multipart parts by name
/// and by their own type, in the request and in the response. A body that cannot be masked (not JSON, form or multipart, or not what its type
/// says), or that its request redacts, is left out, with a comment giving its size and type. So
/// is a response body kept only in part (a stream cut at the recording's limit), unless it is
/// made of lines masked one by one (event streams, JSON Lines). URLs lose their userinfo.
struct CassetteRedaction: Sendable {
    let redactor: Redactor
    /// Whether bodies that cannot be masked are kept as they are instead of left out.
    let keepsUnmaskableBodies: Bool

    init(_ settings: APIConfig.LogSettings, keepsUnmaskableBodies: Bool = false) {
        redactor = Redactor(settings: settings)
        self.keepsUnmaskableBodies = keepsUnmaskableBodies
    }

    func entry(
        request: TransportRequest,
        response: TransportResponse,
        started: Date,
        duration: Duration,
        truncated: Bool = false
    ) -> HARArchive.Entry {
        let milliseconds = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        return HARArchive.Entry(
            startedDateTime: started.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)),
            time: milliseconds,
            request: harRequest(request),
            response: harResponse(
                response, limit: request.maxResponseBytes, redacted: request.shouldRedactResponseBody, truncated: truncated),
            timings: HARArchive.Timings(send: 0, wait: milliseconds, receive: 0)
        )
    }

    private func harRequest(_ request: TransportRequest) -> HARArchive.Request {
        let url = redactor.maskedURL(request.url)
        var result = HARArchive.Request(method: request.method.rawValue, url: url)
        result.headers = headers(request.headerFields)
        result.queryString = Self.queryItems(of: url).map { HARArchive.NameValue(name: $0.name, value: $0.value) }
        if let body = request.body?.bytes, body.readableBytes > 0 {
            let contentType = request.headerFields[.contentType]
            let kept = keptBody(
                Data(buffer: body, byteTransferStrategy: .noCopy), contentType: contentType, redacted: request.shouldRedactRequestBody)
            result.postData = HARArchive.PostData(
                mimeType: contentType ?? "", text: kept.text, encoding: kept.encoding, comment: kept.comment)
            result.bodySize = kept.size
        } else {
            result.bodySize = 0
        }
        return result
    }

    private func harResponse(_ response: TransportResponse, limit: Int, redacted: Bool, truncated: Bool) -> HARArchive.Response {
        var fields = response.headerFields
        // The recording transport collects a streamed body before it is recorded.
        let bytes = response.body.bytes ?? ByteBuffer()
        var body = Data(buffer: bytes, byteTransferStrategy: .noCopy)
        if let encoding = fields[.contentEncoding], BodyDecompression.decodes(encoding),
            let decoded = try? BodyDecompression.decompress(bytes, encoding: encoding, limit: limit)
        {
            // HAR keeps the decoded body; the fields that described the encoded one go with it.
            body = Data(buffer: decoded)
            fields[.contentEncoding] = nil
            fields[.contentLength] = nil
        }
        let contentType = fields[.contentType]
        let kept = keptBody(body, contentType: contentType, redacted: redacted, truncated: truncated)
        var result = HARArchive.Response(status: response.status.code, statusText: response.status.reasonPhrase)
        result.headers = headers(fields)
        result.content = HARArchive.Content(
            size: kept.size,
            mimeType: contentType ?? "",
            text: kept.text,
            encoding: kept.text?.isEmpty == false ? kept.encoding : nil,
            comment: kept.comment
        )
        result.redirectURL = fields[.location].map(redactor.maskedURL) ?? ""
        result.bodySize = kept.size
        return result
    }

    /// A body as a HAR file keeps it: masked; or, when it cannot be masked, its request redacts
    /// it, or only its first bytes were kept (`truncated`) and it is not made of lines masked
    /// one by one, left out (no text) with a comment giving its size and type.
    private func keptBody(
        _ body: Data,
        contentType: String?,
        redacted: Bool,
        truncated: Bool = false
    ) -> (text: String?, encoding: String?, size: Int, comment: String?) {
        guard !body.isEmpty else { return ("", nil, 0, nil) }
        let essence = contentType.map { String(MediaType.essence(of: $0)) } ?? ""
        let cutAndWhole = truncated && !Self.isMaskedLineByLine(contentType)
        let masked: Data?
        if redacted {
            masked = nil
        } else if !Redactor.isMaskable(essence) {
            // Kept only when asked, for types the rules cannot mask; a body of a type they mask
            // that fails to mask (a multipart body cut short, a form that is JSON) never is.
            masked = keepsUnmaskableBodies ? body : nil
        } else {
            masked = cutAndWhole ? nil : redactor.maskedBody(body, contentType: contentType)
        }
        guard let masked else {
            let reason = redacted ? "the request redacts it" : cutAndWhole ? "only its first bytes were kept" : "it cannot be masked"
            return (nil, nil, body.count, Redactor.leftOut(body.count, contentType: contentType, reason: reason))
        }
        let (text, encoding) = BodyText.encode(masked, mimeType: contentType)
        return (text, encoding, masked.count, nil)
    }

    /// Whether bodies of `contentType` are masked line by line, so that their first whole lines
    /// are masked as surely as the whole body.
    private static func isMaskedLineByLine(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        let essence = MediaType.essence(of: contentType)
        return essence == "text/event-stream" || essence == "application/jsonl" || essence == "application/x-ndjson"
    }

    func headers(_ fields: HTTPFields) -> [HARArchive.NameValue] {
        fields.map { field in
            HARArchive.NameValue(name: field.name.rawName, value: redactor.headerValue(field.name, field.value))
        }
    }

    /// The name and value pairs of a URL's query, percent-decoded (`+` read as a space).
    static func queryItems(of url: String) -> [(name: String, value: String)] {
        guard let question = url.firstIndex(of: "?") else { return [] }
        let query = url[url.index(after: question)...].split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return formPairs(String(query))
    }

    /// The pairs of a `application/x-www-form-urlencoded` text, percent-decoded.
    static func formPairs(_ text: String) -> [(name: String, value: String)] {
        guard !text.isEmpty else { return [] }
        return text.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    private static func decode(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }
}
