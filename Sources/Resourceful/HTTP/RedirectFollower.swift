import Foundation
import HTTPTypes
import NIOCore

/// Follows redirects around a transport, so that no credential reaches another origin.
///
/// `301`, `302`, `303`, `307` and `308` with a `Location` are followed up to `limit` times.
/// `303` (and `301`/`302` after a `POST`) continue as a `GET` without a body; `307` and `308` keep
/// the method and body. When the next URL has another origin (scheme, host or port),
/// `Authorization`, `Proxy-Authorization` and `Cookie` are dropped and never sent again in that
/// call. A redirect from `https` to `http`, a loop, or more than `limit` hops fail the call.
struct RedirectFollower: Sendable {
    let limit: Int

    private static func isRedirect(_ code: Int) -> Bool {
        switch code {
        case 301, 302, 303, 307, 308: true
        default: false
        }
    }
    private static let credentialFields: [HTTPField.Name] = [.authorization, .proxyAuthorization, .cookie]

    func send(_ request: TransportRequest, through client: any HTTPClient) async throws -> TransportResponse {
        var current = request
        var visited: Set<String> = []
        var hops = 0
        while true {
            let response = try await client.send(current)
            guard limit > 0, Self.isRedirect(response.status.code),
                let location = response.headerFields[.location],
                let from = URL(string: current.url)
            else { return response }
            guard let target = URL(string: location, relativeTo: from)?.absoluteURL,
                let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https", target.host != nil
            else {
                throw APIError(kind: .transport, status: response.status, detail: "the redirect target is not an http(s) URL")
            }
            if from.scheme?.lowercased() == "https", scheme == "http" {
                throw APIError(kind: .transport, status: response.status, detail: "a redirect from https to http was refused")
            }
            hops += 1
            if visited.isEmpty { visited.insert(request.url) }
            guard hops <= limit, visited.insert(target.absoluteString).inserted else {
                throw APIError(kind: .tooManyRedirects, status: response.status, detail: "more than \(limit) redirects, or a loop")
            }
            if Self.origin(of: target) != Self.origin(of: from) {
                for name in Self.credentialFields { current.headerFields[name] = nil }
            }
            let code = response.status.code
            if code == 303 || ((code == 301 || code == 302) && current.method == .post) {
                if current.method != .head { current.method = .get }
                current.body = nil
                current.headerFields[.contentType] = nil
                current.headerFields[.contentLength] = nil
            }
            current.url = target.absoluteString
        }
    }

    static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }
}
