import Foundation
import HTTPTypes

/// How ``API/pages(_:pagination:)`` finds the next page of an index.
public enum Pagination<Request: ResourceRequest>: Sendable {
    /// Follow the `Link: <…>; rel="next"` header field (RFC 8288). The next URL must have the
    /// origin of ``APIConfig/baseURL``: a link elsewhere fails the call rather than send
    /// credentials there.
    case link
    /// Ask the closure for the next request, given the last page (for example with the cursor the
    /// page carried as a parameter); `nil` ends the sequence.
    case cursor(@Sendable (APIResponse<Request.ResourceType>) -> Request?)
}

extension API {
    /// The most pages ``pages(_:pagination:maxPages:)`` and ``all(_:pagination:limit:maxPages:)``
    /// fetch unless told otherwise: a server that keeps naming a new next page cannot keep a
    /// call going for ever.
    public static let defaultMaxPages = 1000

    /// The pages of an index, one call each, fetched as the sequence is iterated.
    ///
    /// ```swift
    /// for try await page in api.pages(ListUsers()) { handle(page) }
    /// ```
    ///
    /// - Parameter maxPages: The most pages fetched. When the last of them still names a next
    ///   page, the sequence throws ``APIError/Kind/tooManyPages`` instead of fetching it.
    public func pages<Request: ResourceRequest>(
        _ request: Request,
        pagination: Pagination<Request> = .link,
        maxPages: Int = API.defaultMaxPages
    ) -> some AsyncSequence<Request.ResourceType, any Error> & Sendable {
        APIPages(api: self, first: request, pagination: pagination, maxPages: maxPages)
    }

    /// Every element of every page, up to `limit` elements and `maxPages` pages.
    ///
    /// - Throws: ``APIError``, from whichever page failed, or ``APIError/Kind/tooManyPages`` when
    ///   `maxPages` pages were fetched, fewer than `limit` elements came with them, and the server
    ///   still names a next page.
    public func all<Request: ResourceRequest>(
        _ request: Request,
        pagination: Pagination<Request> = .link,
        limit: Int = .max,
        maxPages: Int = API.defaultMaxPages
    ) async throws -> Request.ResourceType where Request.ResourceType: RangeReplaceableCollection {
        var all = Request.ResourceType()
        for try await page in pages(request, pagination: pagination, maxPages: maxPages) {
            all.append(contentsOf: page.prefix(limit - all.count))
            if all.count >= limit { break }
        }
        return all
    }
}

/// The pages of an index, as an `AsyncSequence` of each page's decoded value.
struct APIPages<Request: ResourceRequest>: AsyncSequence, Sendable {
    typealias Element = Request.ResourceType

    let api: API
    let first: Request
    let pagination: Pagination<Request>
    let maxPages: Int

    /// Starts at the first page.
    func makeAsyncIterator() -> Iterator {
        Iterator(api: api, pagination: pagination, maxPages: maxPages, next: .request(first, target: nil))
    }

    /// Fetches one page per step.
    struct Iterator: AsyncIteratorProtocol {
        enum Step {
            case request(Request, target: RequestTarget?)
            case link(Request, link: String, from: RequestTarget?)
            case done
        }

        let api: API
        let pagination: Pagination<Request>
        let maxPages: Int
        var next: Step
        var visited: Set<String> = []
        var fetched = 0

        /// The next page, or `nil` after the last.
        mutating func next() async throws -> Request.ResourceType? {
            let request: Request
            let target: RequestTarget?
            switch next {
            case .done:
                return nil
            case _ where fetched >= maxPages:
                next = .done
                throw APIError(kind: .tooManyPages, detail: "the server still names a next page after \(maxPages) pages")
            case .request(let first, let given):
                request = first
                target = given
            case .link(let first, let link, let from):
                next = .done
                request = first
                let resolved = try resolve(link, after: from)
                target = resolved
                guard visited.insert(resolved.url).inserted else {
                    throw Self.refused("repeats an earlier page")
                }
            }
            next = .done
            fetched += 1
            let response = try await api.perform(request, target: target)
            switch pagination {
            case .cursor(let nextRequest):
                if let following = nextRequest(response) { next = .request(following, target: nil) }
            case .link:
                if let link = LinkHeader.next(in: response.headerFields[values: LinkHeader.name]) {
                    if visited.isEmpty, let first = target ?? firstTarget(request) { visited.insert(first.url) }
                    next = .link(request, link: link, from: target)
                }
            }
            return response.value
        }

        /// The target of the first page, as the builder makes it.
        private func firstTarget(_ request: Request) -> RequestTarget? {
            try? api.builder.build(request, options: api.defaultOptions.applying(request), authorization: nil, start: .now).request.target
        }

        /// The target of `link`, resolved against the page it came with; it must share the base
        /// URL's origin.
        private func resolve(_ link: String, after current: RequestTarget?) throws(APIError) -> RequestTarget {
            let base = current.flatMap { URL(string: $0.url) } ?? api.config.baseURL.appendingPathComponent("")
            guard let target = URL(string: link, relativeTo: base)?.absoluteURL, Origin.same(target, api.config.baseURL) else {
                throw Self.refused("points to another origin")
            }
            // User information is a credential, and the server's to choose here: never sent.
            guard target.user == nil, target.password == nil else {
                throw Self.refused("carries user information")
            }
            return RequestTarget(parsing: target.absoluteString, base: api.builder.base)
        }

        /// A next link not followed, and why: the server's to give, the call's to refuse.
        private static func refused(_ why: String) -> APIError {
            APIError(kind: .invalidRequest, detail: "the next link \(why)")
        }
    }
}
