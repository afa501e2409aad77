import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

/// An answer reached through a redirect is not stored under the URL asked for: the redirect may
/// send the next call elsewhere. After the redirect step (its place), the cache sees each hop as a
/// request of its own; before it, it sees the answer come through redirects and stores nothing.
@Suite struct HTTPCacheRedirectTests {
    struct Item: Codable, Sendable, Equatable { var name: String }

    /// `/v1/current` redirects to `/v1/a`, then to `/v1/b`; both answer fresh for a minute.
    private static func stubMovingTarget(_ harness: Harness) throws {
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
    }

    @Test func afterTheRedirectStepEachHopIsFiledUnderItsOwnURL() async throws {
        try await Harness.run(authorization: nil) { harness in
            try Self.stubMovingTarget(harness)
            let storage = InMemoryHTTPCacheStorage()
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [HTTPCacheMiddleware(storage: storage, storageTimeout: .seconds(30))])
            #expect(try await api.call(AdHocRequest<Item, Empty>(.show, "current")).name == "a")
            #expect(try await api.call(AdHocRequest<Item, Empty>(.show, "current")).name == "b")
            // `/v1/a` and `/v1/b` each hold their own answer; the redirecting URL holds none, so
            // the second call asked the server where to go.
            #expect(storage.count == 2)
            #expect(harness.server.requests.filter { $0.path == "/v1/current" }.count == 2)
            // Asked for directly, `/v1/a` is answered from the cache.
            #expect(try await api.call(AdHocRequest<Item, Empty>(.show, "a")).name == "a")
            #expect(harness.server.requests.filter { $0.path == "/v1/a" }.count == 1)
        }
    }

    @Test func beforeTheRedirectStepAnAnswerThroughARedirectIsNotStored() async throws {
        try await Harness.run(authorization: nil) { harness in
            try Self.stubMovingTarget(harness)
            let storage = InMemoryHTTPCacheStorage()
            let api = API(dependencies: harness.dependencies, middlewares: [HTTPCacheMiddleware(storage: storage, storageTimeout: .seconds(30))] + API.defaultMiddlewares)
            let response = try await api.response(AdHocRequest<Item, Empty>(.show, "current"))
            #expect(response.value.name == "a")
            #expect(try await api.call(AdHocRequest<Item, Empty>(.show, "current")).name == "b")
            #expect(storage.count == 0)
            // Asked for directly, the same answer is stored.
            _ = try await api.call(AdHocRequest<Item, Empty>(.show, "a"))
            #expect(storage.count == 1)
        }
    }

    @Test func aNotModifiedReachedThroughARedirectRefreshesNoEntry() async throws {
        try await Harness.run(authorization: nil) { (harness: inout Harness) async throws in
            let elsewhere = try await MockServer.start()
            defer { Task { try? await elsewhere.shutdown() } }
            // Another origin that answers every revalidation with a 304 good for a year.
            elsewhere.stub(
                .get, "/x",
                MockResponse(status: .notModified, headerFields: [.cacheControl: "max-age=31536000", .eTag: "\"v1\"", HTTPField.Name("X-Elsewhere")!: "1"])
            )
            var stale = try MockResponse.json(Item(name: "a"))
            stale.headerFields[.cacheControl] = "max-age=0"
            stale.headerFields[.eTag] = "\"v1\""
            var fresh = try MockResponse.json(Item(name: "a2"))
            fresh.headerFields[.cacheControl] = "max-age=0"
            harness.server.stub(
                .get, "/v1/a",
                stale,
                MockResponse(status: .temporaryRedirect, headerFields: [.location: elsewhere.baseURL.absoluteString + "/x"]),
                fresh
            )
            let storage = InMemoryHTTPCacheStorage()
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [HTTPCacheMiddleware(storage: storage, storageTimeout: .seconds(30))])
            #expect(try await api.call(AdHocRequest<Item, Empty>(.show, "a")).name == "a")
            // The revalidation is redirected and answered 304 by the other origin: not an answer
            // about this entry.
            _ = try? await api.call(AdHocRequest<Item, Empty>(.show, "a"))
            #expect(elsewhere.requests.count == 1)
            // Still stale: the next call asks the server again.
            #expect(try await api.call(AdHocRequest<Item, Empty>(.show, "a")).name == "a2")
            #expect(harness.server.requests.count == 3)
            try await elsewhere.shutdown()
        }
    }
}
