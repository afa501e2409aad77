import Foundation
import HTTPTypes
import NIOCore

/// Follows redirects around a transport, so that no credential reaches another origin.
///
/// `301`, `302`, `303`, `307` and `308` with a `Location` are followed up to `limit` times.
/// `303` (and `301`/`302` after a `POST`) continue as a `GET` without a body; `307` and `308` keep
/// the method and body. When the next URL has another origin (scheme, host or port), every header
/// field that can carry a credential is dropped and never sent again in that call: the ones
/// ``SensitiveNames`` names (`Authorization`, `Proxy-Authorization`, `Cookie`, `X-Api-Key`, any
/// `…-Token`, the configured masked headers) and ``APIConfig/HTTPSettings/sensitiveRedirectHeaders``.
/// A `307`/`308` that would re-send a body to another origin is refused unless the request opts in
/// (``ResourceRequest/sendsBodyAcrossOrigins``). A redirect from `https` to `http` or to another
/// scheme is refused (``APIError/Kind/redirectRefused``); a loop or more than `limit` hops fail
/// with ``APIError/Kind/tooManyRedirects``.
struct RedirectFollower: Sendable {
    let limit: Int
    /// The headers dropped before another origin.
    let sensitive: SensitiveNames

    init(settings: APIConfig) {
        limit = settings.http.maxRedirects
        sensitive = SensitiveNames(
            extra: settings.redaction.maskedHeaders + settings.logging.maskedBodyKeys + settings.http.sensitiveRedirectHeaders
        )
    }

    private static func isRedirect(_ code: Int) -> Bool {
        switch code {
        case 301, 302, 303, 307, 308: true
        default: false
        }
    }

    func send(_ request: TransportRequest, context: CallContext, through client: any HTTPTransport) async throws -> TransportResponse {
        var current = request
        var visited: Set<String> = []
        var hops = 0
        while true {
            var response = try await client.send(current)
            guard limit > 0, Self.isRedirect(response.status.code),
                let location = response.headerFields[.location],
                let from = URL(string: current.url)
            else {
                response.followedRedirect = hops > 0
                return response
            }
            guard let target = URL(string: location, relativeTo: from)?.absoluteURL, let targetOrigin = Origin(target) else {
                throw APIError(kind: .redirectRefused, status: response.status, detail: "the redirect target is not an absolute URL")
            }
            let scheme = targetOrigin.scheme
            guard scheme == "http" || scheme == "https" else {
                throw APIError(kind: .redirectRefused, status: response.status, detail: "a redirect to a \(Origin.safeScheme(scheme)) URL was refused")
            }
            if from.scheme?.lowercased() == "https", scheme == "http" {
                throw APIError(kind: .redirectRefused, status: response.status, detail: "a redirect from https to \(targetOrigin) was refused")
            }
            hops += 1
            if visited.isEmpty { visited.insert(request.url) }
            guard hops <= limit, visited.insert(target.absoluteString).inserted else {
                throw APIError(kind: .tooManyRedirects, status: response.status, detail: "more than \(limit) redirects, or a loop")
            }
            let code = response.status.code
            // The exact origin, not the form written in messages: `exam!ple.com` is not `example.com`.
            let crossesOrigin = targetOrigin != Origin(from)
            if code == 303 || ((code == 301 || code == 302) && current.method == .post) {
                if current.method != .head { current.method = .get }
                current.body = nil
                current.headerFields[.contentType] = nil
                current.headerFields[.contentLength] = nil
            } else if crossesOrigin, current.body != nil, !context.options.sendsBodyAcrossOrigins {
                throw APIError(
                    kind: .redirectRefused,
                    status: response.status,
                    detail: "a \(code) redirect would send the request body to \(targetOrigin)"
                )
            }
            if crossesOrigin {
                current.headerFields = current.headerFields.filter { !sensitive.contains($0.name.canonicalName) }
            }
            current.url = target.absoluteString
        }
    }
}
