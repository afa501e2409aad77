import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

/// An answer the cache gives without the transport (a hit, a revalidated entry) carries the
/// redaction switches and the byte cap the steps before it left, as one from the transport does:
/// a body a request asked never to log is not logged because the cache answered.
@Suite struct HTTPCacheAnswerLimitsTests {
    struct Document: Codable, Sendable, Equatable { var version: String }

    static let marker = "body-marker-7f31c"

    /// A route answering `Document(version: marker)` with the `ETag` `"v1"`, fresh for ten
    /// minutes or stale at once; a `304` to a request that names `"v1"`.
    static func route(_ server: MockServer, revalidates: Bool) {
        server.route(.get, "/v1/doc") { request in
            if request.headerFields[.ifNoneMatch] == "\"v1\"" {
                var notModified = MockResponse.status(.notModified)
                notModified.headerFields[.eTag] = "\"v1\""
                return notModified
            }
            var response = try MockResponse.json(Document(version: Self.marker))
            response.headerFields[.eTag] = "\"v1\""
            response.headerFields[.cacheControl] = revalidates ? "max-age=0" : "max-age=600"
            return response
        }
    }

    @Test(arguments: [false, true])
    func aResponseBodyTheStepsBeforeRedactIsNotLoggedWhenTheCacheAnswers(revalidates: Bool) async throws {
        try await Harness.run(authorization: nil) { (harness: inout Harness) async throws in
            Self.route(harness.server, revalidates: revalidates)
            // A user's step after the logging step asks for the body never to be shown.
            let redacting = ChangeOptions { $0.shouldRedactResponseBody = true }
            let cache = HTTPCacheMiddleware(storage: InMemoryHTTPCacheStorage())
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [redacting, cache])
            for _ in 0..<2 {
                #expect(try await api.call(AdHocRequest<Document, Empty>(.show, "doc")) == Document(version: Self.marker))
            }
            // The second call is a hit (no request) or a revalidation (a 304).
            #expect(harness.server.requests.count == (revalidates ? 2 : 1))
            #expect(harness.logText.contains(revalidates ? "revalidated" : "hit"))
            #expect(!harness.logText.contains(Self.marker), "\(harness.logText)")
        }
    }

    @Test(arguments: [false, true])
    func aByteCapTheStepsBeforeSetHoldsForAnAnswerFromTheCache(revalidates: Bool) async throws {
        try await Harness.run(authorization: nil) { (harness: inout Harness) async throws in
            Self.route(harness.server, revalidates: revalidates)
            let cap = Locked<Int?>(nil)
            let capping = ChangeOptions { options in
                if let bytes = cap.withLock({ $0 }) { options.maxResponseBytes = bytes }
            }
            let cache = HTTPCacheMiddleware(storage: InMemoryHTTPCacheStorage())
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [capping, cache])
            #expect(try await api.call(AdHocRequest<Document, Empty>(.show, "doc")) == Document(version: Self.marker))
            cap.withLock { $0 = 8 }
            let error = await #expect(throws: APIError.self) {
                try await api.call(AdHocRequest<Document, Empty>(.show, "doc"))
            }
            #expect(error?.kind == .responseTooLarge)
        }
    }
}
