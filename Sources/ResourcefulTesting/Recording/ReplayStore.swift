import Foundation
import HTTPTypes
import Logging
import NIOCore
import Resourceful

/// The recordings a replay answers from, each used once, in recorded order.
final class ReplayStore: Sendable {
    struct Recording: Sendable {
        var request: CassetteRequest
        var response: TransportResponse
        var used = false
    }

    let matcher: RequestMatcher
    private let recordings: Locked<[Recording]>

    init(recordings: [Recording], matcher: RequestMatcher) {
        self.recordings = Locked(recordings)
        self.matcher = matcher
    }

    /// The first unused recording that matches `request`, now used; or why there is none.
    func answer(_ request: TransportRequest) -> Result<TransportResponse, CassetteError> {
        recordings.withLock { recordings in
            var usedMatches = 0
            var closest: (recording: CassetteRequest, mismatch: RequestMatcher.Mismatch)?
            for index in recordings.indices {
                if let mismatch = matcher.mismatch(request, recordings[index].request) {
                    if closest.map({ mismatch.weight < $0.mismatch.weight }) ?? true {
                        closest = (recordings[index].request, mismatch)
                    }
                } else if recordings[index].used {
                    usedMatches += 1
                } else {
                    recordings[index].used = true
                    return .success(recordings[index].response)
                }
            }
            let name = matcher.describe(request)
            if usedMatches > 0 {
                return .failure(CassetteError(.noRecording, detail: "\(name): its \(usedMatches) recording(s) were all used"))
            }
            guard let closest else {
                return .failure(CassetteError(.noRecording, detail: "\(name): the cassette holds no recording"))
            }
            return .failure(CassetteError(
                .noRecording,
                detail: "\(name): the closest recording, \(matcher.describe(closest.recording)), does not match: \(closest.mismatch.reason)"
            ))
        }
    }

    /// Adds an exchange answered elsewhere, as used.
    func add(_ request: CassetteRequest, _ response: TransportResponse) {
        recordings.withLock { $0.append(Recording(request: request, response: response, used: true)) }
    }

    /// The recordings a HAR archive holds; entries that cannot be replayed are left out, each
    /// with a warning on `logger`.
    static func recordings(in archive: HARArchive, file: String, logger: Logger) -> [Recording] {
        archive.log.entries.enumerated().compactMap { index, entry in
            do throws(UnusableEntry) {
                return try recording(entry)
            } catch {
                logger.warning(
                    "Cassette entry left out",
                    metadata: ["file": "\(file)", "entry": "\(index)", "reason": "\(error.reason)"]
                )
                return nil
            }
        }
    }

    struct UnusableEntry: Error {
        var reason: String
    }

    static func recording(_ entry: HARArchive.Entry) throws(UnusableEntry) -> Recording {
        guard let request = entry.request, let response = entry.response else { throw UnusableEntry(reason: "no request or no response") }
        guard !request.method.isEmpty, HTTPRequest.Method(request.method) != nil else { throw UnusableEntry(reason: "no valid method") }
        guard URLParts(request.url).origin.count > 3 else { throw UnusableEntry(reason: "not an absolute URL") }
        // A browser writes 0 for a request that got no answer.
        guard (100...999).contains(response.status) else { throw UnusableEntry(reason: "status \(response.status) is no answer") }
        guard let body = BodyText.decode(response.content?.text, encoding: response.content?.encoding) else {
            throw UnusableEntry(reason: "the response body is not valid base64")
        }
        var fields = HTTPFields()
        for header in response.headers ?? [] {
            // HTTP/2 pseudo-fields, and fields that described the body before it was decoded.
            let lowered = header.name.lowercased()
            guard !lowered.hasPrefix(":"), !["content-encoding", "content-length", "transfer-encoding"].contains(lowered),
                let name = HTTPField.Name(header.name)
            else { continue }
            fields.append(HTTPField(name: name, value: header.value))
        }
        let requestHeaders = (request.headers ?? []).filter { !$0.name.hasPrefix(":") }.map { (name: $0.name, value: $0.value) }
        let contentType = request.postData?.mimeType ?? requestHeaders.first { $0.name.lowercased() == "content-type" }?.value
        return Recording(
            request: CassetteRequest(
                method: request.method.uppercased(),
                url: request.url,
                headerFields: requestHeaders,
                body: requestBody(request.postData),
                contentType: contentType
            ),
            response: TransportResponse(
                status: HTTPResponse.Status(code: response.status, reasonPhrase: response.statusText ?? ""),
                headerFields: fields,
                body: ByteBuffer(bytes: body)
            )
        )
    }

    /// A request body from `text`, or from `params` as a form when a tool wrote only those.
    private static func requestBody(_ postData: HARArchive.PostData?) -> Data {
        guard let postData else { return Data() }
        if let text = postData.text { return BodyText.decode(text, encoding: postData.encoding) ?? Data(text.utf8) }
        guard let params = postData.params else { return Data() }
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let encode = { (text: String) in text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text }
        return Data(params.map { encode($0.name) + "=" + encode($0.value ?? "") }.joined(separator: "&").utf8)
    }
}
