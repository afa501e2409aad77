import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

/// The cache never gives one credential's answer to another, to an anonymous call, or after the
/// storage's credential changed: answers are filed under a digest of every credential the
/// redaction rules know, in header fields and in the query.
@Suite struct HTTPCacheCredentialTests {
    struct Answer: Codable, Sendable, Equatable { var seenBy: String }

    /// A storage that remembers every key it was given.
    final class KeyRecordingStorage: HTTPCacheStorage {
        let inner = InMemoryHTTPCacheStorage()
        let keys = Locked<[String]>([])
        func entry(forKey key: String) async -> HTTPCacheEntry? {
            keys.withLock { $0.append(key) }
            return await inner.entry(forKey: key)
        }
        func store(_ entry: HTTPCacheEntry, forKey key: String) async {
            keys.withLock { $0.append(key) }
            await inner.store(entry, forKey: key)
        }
        func removeEntry(forKey key: String) async {
            keys.withLock { $0.append(key) }
            await inner.removeEntry(forKey: key)
        }
    }

    /// `/v1/me` answers with what identified the caller, under `cacheControl`.
    static func serveIdentity(_ server: MockServer, cacheControl: String) {
        server.route(.get, "/v1/me") { request in
            let who =
                request.headerFields[.authorization] ?? request.headerFields[.cookie] ?? request.headerFields[HTTPField.Name("X-Api-Key")!]
                ?? (request.query.isEmpty ? "anonymous" : request.query)
            var response = try MockResponse.json(Answer(seenBy: who))
            response.headerFields[.cacheControl] = cacheControl
            return response
        }
    }

    static func me(_ api: API, headers: [String: String] = [:], query: String? = nil) async throws -> String {
        var request = AdHocRequest<Answer, Empty>(.show, query.map { ResourcePath(encoded: "me?" + $0) } ?? "me")
        request.headers = headers
        return try await api.call(request).seenBy
    }

    static let variants: [(cacheControl: String, storesAuthorizedResponses: Bool)] = [
        ("private, max-age=60, must-revalidate", false),
        ("public, max-age=60", false),
        ("max-age=60, s-maxage=60", false),
        ("max-age=60", true),
    ]

    @Test(arguments: variants)
    func everyCredentialGetsItsOwnAnswer(cacheControl: String, storesAuthorizedResponses: Bool) async throws {
        try await Harness.run(authorization: "Bearer alice-5e1") { (harness: inout Harness) async throws in
            harness.dependencies.apiConfig.cache.storesAuthorizedResponses = storesAuthorizedResponses
            Self.serveIdentity(harness.server, cacheControl: cacheControl)
            let storage = InMemoryAuthenticationStorage([Harness.service: "Bearer alice-5e1"])
            harness.dependencies.authenticationStorage = storage
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [HTTPCacheMiddleware()])

            #expect(try await Self.me(api) == "Bearer alice-5e1")
            #expect(try await Self.me(api) == "Bearer alice-5e1")
            #expect(harness.server.requests.count == 1, "Alice's second call is answered from the cache")
            // Bob sends his own credential.
            #expect(try await Self.me(api, headers: ["Authorization": "Bearer bob-77a"]) == "Bearer bob-77a")
            // Carol: the storage's credential changed.
            storage.setAuthenticationHeader("Bearer carol-c40", for: Harness.service)
            #expect(try await Self.me(api) == "Bearer carol-c40")
            // Logged out: no credential at all.
            storage.setAuthenticationHeader(nil, for: Harness.service)
            #expect(try await Self.me(api) == "anonymous")
            #expect(harness.server.requests.count == 4)
            // Alice again, still from her own entry.
            storage.setAuthenticationHeader("Bearer alice-5e1", for: Harness.service)
            #expect(try await Self.me(api) == "Bearer alice-5e1")
            #expect(harness.server.requests.count == 4)
        }
    }

    @Test func aPrivateAnswerToAnAnonymousCallIsNotStored() async throws {
        try await Harness.run(authorization: nil) { (harness: inout Harness) async throws in
            Self.serveIdentity(harness.server, cacheControl: "private, max-age=60")
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [HTTPCacheMiddleware()])
            _ = try await Self.me(api)
            _ = try await Self.me(api)
            #expect(harness.server.requests.count == 2)
        }
    }

    /// Credentials outside `Authorization`: a cookie, an API-key header and a query item.
    static let otherCredentials: [(name: String, first: ([String: String], String?), second: ([String: String], String?))] = [
        ("cookie", (["Cookie": "session=alice-3f"], nil), (["Cookie": "session=bob-9d"], nil)),
        ("api key header", (["X-Api-Key": "key-alice-21"], nil), (["X-Api-Key": "key-bob-88"], nil)),
        ("query item", ([:], "api_key=alice-q1"), ([:], "api_key=bob-q2")),
    ]

    @Test(arguments: otherCredentials)
    func aCredentialOutsideAuthorizationCountsAsOne(
        name: String,
        first: ([String: String], String?),
        second: ([String: String], String?)
    ) async throws {
        try await Harness.run(authorization: nil) { (harness: inout Harness) async throws in
            // Not `public`: an answer to a credentialed request is not stored at all.
            Self.serveIdentity(harness.server, cacheControl: "max-age=60")
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [HTTPCacheMiddleware()])
            let alice = try await Self.me(api, headers: first.0, query: first.1)
            #expect(try await Self.me(api, headers: first.0, query: first.1) == alice)
            #expect(harness.server.requests.count == 2, "\(name): an answer to a credentialed request was stored")
            #expect(try await Self.me(api, headers: second.0, query: second.1) != alice, "\(name)")
            #expect(try await Self.me(api) == "anonymous", "\(name)")
        }
    }

    @Test(arguments: otherCredentials)
    func aPublicAnswerIsStillKeptPerCredential(
        name: String,
        first: ([String: String], String?),
        second: ([String: String], String?)
    ) async throws {
        try await Harness.run(authorization: nil) { (harness: inout Harness) async throws in
            Self.serveIdentity(harness.server, cacheControl: "public, max-age=60")
            let storage = KeyRecordingStorage()
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [HTTPCacheMiddleware(storage: storage, storageTimeout: .seconds(30))])
            let alice = try await Self.me(api, headers: first.0, query: first.1)
            #expect(try await Self.me(api, headers: first.0, query: first.1) == alice)
            #expect(harness.server.requests.count == 1, "\(name)")
            let bob = try await Self.me(api, headers: second.0, query: second.1)
            #expect(bob != alice, "\(name): Bob got Alice's answer")
            #expect(try await Self.me(api) == "anonymous", "\(name)")
            #expect(harness.server.requests.count == 3, "\(name)")
            // No key holds a secret.
            let keys = storage.keys.value.joined(separator: "\n")
            for secret in ["alice-3f", "bob-9d", "key-alice-21", "key-bob-88", "alice-q1", "bob-q2"] {
                #expect(!keys.contains(secret), "\(name): a cache key holds \(secret)")
            }
        }
    }

    @Test func aChangeInvalidatesTheCallersOwnAndAnonymousEntries() async throws {
        try await Harness.run(authorization: "Bearer alice-5e1") { (harness: inout Harness) async throws in
            Self.serveIdentity(harness.server, cacheControl: "public, max-age=60")
            harness.server.stub(.put, "/v1/me", .status(.noContent))
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [HTTPCacheMiddleware()])
            _ = try await Self.me(api)
            _ = try await Self.me(api)
            #expect(harness.server.requests.count == 1)
            _ = try await api.call(AdHocRequest<Empty, Empty>(.update, "me"))
            _ = try await Self.me(api)
            #expect(harness.server.requests.filter { $0.method == .get }.count == 2)
        }
    }
}
