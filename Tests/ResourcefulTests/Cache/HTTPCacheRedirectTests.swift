import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

/// An answer reached through a redirect is not stored under the URL asked for: the redirect may
/// send the next call elsewhere.
@Suite struct HTTPCacheRedirectTests {
    struct Item: Codable, Sendable, Equatable { var name: String }

    @Test func anAnswerReachedThroughARedirectIsNotStored() async throws {
        try await Harness.run(authorization: nil) { harness in
            let base = harness.server.baseURL.absoluteString
            harness.server.stub(
                .get, "/v1/current",
                MockResponse(status: .found, headerFields: [.location: "\(base)/v1/a"]),
                MockResponse(status: .found, headerFields: [.location: "\(base)/v1/b"])
            )
            var answer = try MockResponse.json(Item(name: "a"))
            answer.headerFields[.cacheControl] = "max-age=60"
            harness.server.stub(.get, "/v1/a", answer)
            answer = try MockResponse.json(Item(name: "b"))
            answer.headerFields[.cacheControl] = "max-age=60"
            harness.server.stub(.get, "/v1/b", answer)
            let storage = InMemoryHTTPCacheStorage()
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [HTTPCacheMiddleware(storage: storage)])
            #expect(try await api.call(AdHocRequest<Item, Empty>(.show, "current")).name == "a")
            #expect(try await api.call(AdHocRequest<Item, Empty>(.show, "current")).name == "b")
            #expect(storage.count == 0)
            // Asked for directly, the same answer is stored.
            _ = try await api.call(AdHocRequest<Item, Empty>(.show, "a"))
            #expect(storage.count == 1)
        }
    }
}
