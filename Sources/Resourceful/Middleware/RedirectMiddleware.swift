import Foundation
import HTTPTypes
import NIOCore

/// Follows redirects, so that no credential reaches another origin; last in
/// ``API/defaultMiddlewares``.
///
/// `301`, `302`, `303`, `307` and `308` with a `Location` are followed up to
/// ``RequestOptions/maxRedirects`` times (``APIConfig/HTTPSettings/maxRedirects``). `303` (and
/// `301`/`302` after a `POST`) continue as a `GET` without a body; `307` and `308` keep the method
/// and body. When the next URL has another origin (scheme, host or port), every header field that
/// can carry a credential is dropped and never sent again in that call: every one whose name the
/// redaction rules mask, the rule the logs follow (`Authorization`, `Proxy-Authorization`,
/// `Cookie`, `X-Api-Key`, any `…-Token`, the configured masked headers), the credential's field,
/// ``RequestOptions/sensitiveRedirectHeaders`` and every configured base header
/// (``APIConfig/baseHeaders``: they belong to the API's origin, whatever their names, so that a
/// key in a field such as `X-JFrog-Art-Api` stays there). A `307`/`308` that
/// would re-send a body to another origin is refused unless the request opts in
/// (``RequestOptions/sendsBodyAcrossOrigins``). A redirect from `https` to `http` or to another
/// scheme is refused (``APIError/Kind/redirectRefused``); a loop or more than the limit of hops
/// fail with ``APIError/Kind/tooManyRedirects``.
///
/// Each hop goes through the middlewares after this one as a request of its own, so that an
/// ``HTTPCacheMiddleware`` placed after it files each answer under the URL that gave it. Whatever
/// those middlewares add (a signature, a refreshed credential), the ``API`` drops every such field
/// again from a request bound for another origin than its call's, just before the transport. A
/// `307`/`308` of a request whose body is a stream is refused: the stream was read. The response
/// names the targets that redirected it in ``TransportResponse/redirects``.
public struct RedirectMiddleware: APIMiddleware, AnswersFromTheStepsAfter {
    /// Creates the redirect step; its limits come from each call's ``RequestOptions``.
    public init() {}

    private static func isRedirect(_ code: Int) -> Bool {
        switch code {
        case 301, 302, 303, 307, 308: true
        default: false
        }
    }

    /// The error a refused hop ends the call with: why, with the redirect's status.
    private static func refusal(_ detail: String, _ response: TransportResponse, kind: APIError.Kind = .redirectRefused) -> APIError {
        APIError(kind: kind, status: response.status, detail: detail)
    }

    /// What makes a hop the same request as another: its method and URL.
    private static func visit(_ method: HTTPRequest.Method, _ url: String) -> String {
        method.rawValue + " " + url
    }

    /// Sends `request`, then the request of each redirect, and returns the last answer.
    public func intercept(
        _ request: TransportRequest,
        context: CallContext,
        next: (TransportRequest, CallContext) async throws -> TransportResponse
    ) async throws -> TransportResponse {
        let limit = context.options.maxRedirects
        var current = request
        var visited: Set<String> = []
        var redirects: [RequestTarget] = []
        var hopContext = context
        while true {
            var response = try await next(current, hopContext)
            guard limit > 0, Self.isRedirect(response.status.code),
                let location = response.headerFields[.location],
                let from = URL(string: current.url)
            else {
                response.redirects = redirects
                return response
            }
            guard let target = URL(string: location, relativeTo: from)?.absoluteURL, let targetOrigin = Origin(target) else {
                throw Self.refusal("the redirect target is not an absolute URL", response)
            }
            let scheme = targetOrigin.scheme
            guard scheme == "http" || scheme == "https" else {
                throw Self.refusal("a redirect to a \(Origin.safeScheme(scheme)) URL was refused", response)
            }
            if from.scheme?.lowercased() == "https", scheme == "http" {
                throw Self.refusal("a redirect from https to \(targetOrigin) was refused", response)
            }
            redirects.append(current.target)
            if visited.isEmpty { visited.insert(Self.visit(request.method, request.url)) }
            let code = response.status.code
            // The exact origin, not the form written in messages: `exam!ple.com` is not `example.com`.
            let crossesOrigin = targetOrigin != Origin(from)
            if code == 303 || ((code == 301 || code == 302) && current.method == .post) {
                if current.method != .head { current.method = .get }
                current.body = nil
                current.headerFields[.contentType] = nil
                current.headerFields[.contentLength] = nil
            } else if let body = current.body, !body.canBeSentAgain {
                // A stream is read once: sending it again would send nothing.
                throw Self.refusal("a \(code) redirect would send a streamed body again", response)
            } else if crossesOrigin, current.body != nil, !context.options.sendsBodyAcrossOrigins {
                throw Self.refusal("a \(code) redirect would send the request body to \(targetOrigin)", response)
            }
            // A loop is the same request again: a `303` from a `POST` to its own URL (Post/Redirect/Get)
            // asks for a `GET` of it, which is not one.
            guard redirects.count <= limit, visited.insert(Self.visit(current.method, target.absoluteString)).inserted else {
                throw Self.refusal("more than \(limit) redirects, or a loop", response, kind: .tooManyRedirects)
            }
            if crossesOrigin {
                let names = context.options.crossOriginSecrets
                current.headerFields = current.headerFields.filter { !names.contains($0.name.canonicalName) }
            }
            current.target = RequestTarget(parsing: target.absoluteString, base: request.target)
            // The steps after this one see the hop; the API sends it as built here, and without
            // a secret once the call has been elsewhere.
            let leftOrigin = (hopContext.redirect?.leftOrigin ?? false) || crossesOrigin
            hopContext.redirect = CallContext.RedirectHop(target: current.target, leftOrigin: leftOrigin)
        }
    }
}
