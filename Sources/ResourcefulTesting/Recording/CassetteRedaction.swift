import Foundation
import HTTPTypes
import NIOCore
import NIOFoundationCompat
import Resourceful

/// Turns an exchange into a HAR entry with every secret masked by the logger's rules
/// (``APIConfig/LogSettings``): header values, query values, JSON fields at any depth, form and
/// multipart fields, in the request and in the response.
struct CassetteRedaction: Sendable {
    let redactor: Redactor

    init(_ settings: APIConfig.LogSettings) {
        redactor = Redactor(settings: settings)
    }

    func entry(
        request: TransportRequest,
        response: TransportResponse,
        started: Date,
        duration: Duration
    ) -> HARArchive.Entry {
        let milliseconds = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        return HARArchive.Entry(
            startedDateTime: started.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)),
            time: milliseconds,
            request: harRequest(request),
            response: harResponse(response, limit: request.maxResponseBytes),
            timings: HARArchive.Timings(send: 0, wait: milliseconds, receive: 0)
        )
    }

    private func harRequest(_ request: TransportRequest) -> HARArchive.Request {
        let url = redactor.maskedURL(request.url)
        var result = HARArchive.Request(method: request.method.rawValue, url: url)
        result.headers = headers(request.headerFields)
        result.queryString = Self.queryItems(of: url).map { HARArchive.NameValue(name: $0.name, value: $0.value) }
        if let body = request.body, body.readableBytes > 0 {
            let contentType = request.headerFields[.contentType]
            let masked = redactor.maskedBody(Data(buffer: body), contentType: contentType)
            let (text, encoding) = BodyText.encode(masked, mimeType: contentType)
            result.postData = HARArchive.PostData(mimeType: contentType ?? "", text: text, encoding: encoding)
            result.bodySize = masked.count
        } else {
            result.bodySize = 0
        }
        return result
    }

    private func harResponse(_ response: TransportResponse, limit: Int) -> HARArchive.Response {
        var fields = response.headerFields
        var body = Data(buffer: response.body)
        if let encoding = fields[.contentEncoding], BodyDecompression.decodes(encoding),
            let decoded = try? BodyDecompression.decompress(response.body, encoding: encoding, limit: limit)
        {
            // HAR keeps the decoded body; the fields that described the encoded one go with it.
            body = Data(buffer: decoded)
            fields[.contentEncoding] = nil
            fields[.contentLength] = nil
        }
        let contentType = fields[.contentType]
        let masked = redactor.maskedBody(body, contentType: contentType)
        let (text, encoding) = BodyText.encode(masked, mimeType: contentType)
        var result = HARArchive.Response(status: response.status.code, statusText: response.status.reasonPhrase)
        result.headers = headers(fields)
        result.content = HARArchive.Content(size: masked.count, mimeType: contentType ?? "", text: text, encoding: masked.isEmpty ? nil : encoding)
        result.redirectURL = fields[.location] ?? ""
        result.bodySize = masked.count
        return result
    }

    func headers(_ fields: HTTPFields) -> [HARArchive.NameValue] {
        fields.map { field in
            HARArchive.NameValue(name: field.name.rawName, value: redactor.masksHeader(field.name.canonicalName) ? Redactor.mask : field.value)
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
