import Foundation
import HTTPTypes
import Logging
import NIOCore
import PostgresNIO
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

@testable import ResourcefulPostgres

/// Two APIs, one per instance, each with its own cache step over its own storage, against a
/// server on loopback (in the storage's suite, on its PostgreSQL server).
extension PostgresHTTPCacheStorageTests {
    struct Answer: Codable, Sendable, Equatable { var seenBy: String }

    static func call(_ api: API, _ path: String, authorization: String? = nil) async throws -> String {
        var request = AdHocRequest<Answer, Empty>(.show, ResourcePath(encoded: path))
        if let authorization { request.headers = ["Authorization": authorization] }
        return try await api.call(request).seenBy
    }

    @Test("The second instance is answered from the first one's entry; Alice's answer never reaches Bob")
    func theFleetSharesItsCache() async throws {
        let keys = try SharedStateKeys(current: "k1", keys: ["k1": Array(repeating: 3, count: 32)])
        let alice = "Bearer alice-\(UUID().uuidString)"
        let bob = "Bearer bob-\(UUID().uuidString)"
        try await MockServer.withTransport { server, transport in
            server.route(.get, "/v1/catalog") { _ in
                var response = try MockResponse.json(Answer(seenBy: "anyone"))
                response.headerFields[.cacheControl] = "max-age=60"
                return response
            }
            server.route(.get, "/v1/me") { request in
                var response = try MockResponse.json(Answer(seenBy: request.headerFields[.authorization] ?? "anonymous"))
                response.headerFields[.cacheControl] = "max-age=60"
                return response
            }
            var config = APIConfig(baseURL: server.baseURL.appendingPathComponent("v1"), service: "cache-fleet")
            config.cache.storesAuthorizedResponses = true
            let settings = config
            try await Self.withStorageInstances(2) { instances in
                let apis = instances.map { instance in
                    let cache = HTTPCacheMiddleware(
                        storage: PostgresHTTPCacheStorage(sharedState: instance, keys: keys), digestKey: keys.cacheDigestKey,
                        storageTimeout: .seconds(5))
                    return API(
                        dependencies: APIDependencies(apiConfig: settings, transport: transport),
                        middlewares: API.defaultMiddlewares + [cache])
                }
                #expect(try await Self.call(apis[0], "catalog") == "anyone")
                #expect(try await Self.call(apis[1], "catalog") == "anyone")
                #expect(server.requests.count == 1, "the second instance asked the upstream")

                let aliceFirst = try await Self.call(apis[0], "me", authorization: alice)
                let aliceSecond = try await Self.call(apis[1], "me", authorization: alice)
                let aliceGotHers = aliceFirst == alice && aliceSecond == alice
                #expect(aliceGotHers, "Alice got another answer than her own")
                #expect(server.requests.count == 2, "Alice's answer was not shared")
                let bobFirst = try await Self.call(apis[1], "me", authorization: bob)
                let bobSecond = try await Self.call(apis[0], "me", authorization: bob)
                let bobGotHis = bobFirst == bob && bobSecond == bob
                #expect(bobGotHis, "Bob got another answer than his own")
                #expect(server.requests.count == 3)
                let anonymous = try await Self.call(apis[0], "me")
                #expect(anonymous == "anonymous")

                // No credential is in a row in clear.
                let stored = try await rows("SELECT encode(entry, 'escape') FROM resourceful.http_cache").joined()
                let inClear = stored.contains("alice-") || stored.contains("bob-")
                #expect(!inClear, "a credential is in the cache's rows")
            }
        }
    }
}

/// The in-memory fallback, and the entry's bytes.
struct PostgresHTTPCacheStorageFallbackTests {
    @Test("An unreachable store: entries kept in memory, at once, never a credential's without keys")
    func anUnreachableStoreFallsBackToMemory() async throws {
        var options = PostgresSharedState.Options()
        options.statementTimeout = .milliseconds(200)
        // Nothing listens on port 1, and the client is not even run.
        let configuration = PostgresClient.Configuration(
            host: "127.0.0.1", port: 1, username: "nobody", password: nil, database: "none", tls: .disable)
        let shared = PostgresSharedState(configuration: configuration, options: options, logger: Logger(label: "fallback-test"))
        let storage = PostgresHTTPCacheStorage(sharedState: shared)
        let entry = PostgresHTTPCacheStorageTests.entry(body: "kept")
        let key = PostgresHTTPCacheStorageTests.anonymousKey()
        let credentialed = PostgresHTTPCacheStorageTests.credentialedKey()
        let started = ContinuousClock.now
        await storage.store(entry, forKey: key)
        #expect(!shared.isAvailable)
        #expect(await storage.entry(forKey: key) == entry)
        #expect(await storage.updateEntry(forKey: key) { _ in PostgresHTTPCacheStorageTests.entry(body: "updated") } != nil)
        #expect(await storage.entry(forKey: key)?.body == ByteBuffer(string: "updated"))
        await storage.store(entry, forKey: credentialed)
        #expect(await storage.entry(forKey: credentialed) == nil)
        await storage.removeEntry(forKey: key)
        #expect(await storage.entry(forKey: key) == nil)
        #expect(ContinuousClock.now - started < .seconds(3))
    }

    @Test("An entry's bytes round trip, fields in order")
    func anEntryRoundTrips() {
        let entry = PostgresHTTPCacheStorageTests.entry(
            body: "body ✓", fields: [("B", "2"), ("a", "1"), ("B", "3"), ("ETag", "\"x\"")], varying: ["accept": "text/plain", "authorization": "hmac-sha256:00"])
        #expect(HTTPCacheEntryCoding.decode(HTTPCacheEntryCoding.encode(entry)) == entry)
        #expect(HTTPCacheEntryCoding.decode(HTTPCacheEntryCoding.encode(entry))?.headerFields.map(\.name.rawName) == ["B", "a", "B", "ETag"])
    }

    @Test("Hostile bytes never decode into an entry nor trap: every cut, every flipped length, random bytes")
    func hostileBytesAreRefused() {
        let bytes = HTTPCacheEntryCoding.encode(PostgresHTTPCacheStorageTests.entry(body: "hello", varying: ["accept": "x"]))
        for end in 0..<bytes.count { #expect(HTTPCacheEntryCoding.decode(Array(bytes[0..<end])) == nil) }
        #expect(HTTPCacheEntryCoding.decode(bytes + [0]) == nil)
        for index in bytes.indices {
            for value: UInt8 in [0, 0x7f, 0xff] {
                var altered = bytes
                altered[index] = value
                // Whatever it decodes to (a changed letter still decodes), decoding ends.
                _ = HTTPCacheEntryCoding.decode(altered)
            }
        }
        // Counts and lengths claiming more than there is.
        #expect(HTTPCacheEntryCoding.decode([1, 0, 200, 0, 0, 0, 0] + Array(repeating: 0, count: 16) + [0xff, 0xff, 0xff, 0xff]) == nil)
        var generator = SeededRandomNumberGenerator(seed: 42)
        for _ in 0..<2000 {
            let length = Int.random(in: 0..<64, using: &generator)
            var random = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if !random.isEmpty { random[0] = 1 }
            _ = HTTPCacheEntryCoding.decode(random)
        }
        #expect(HTTPCacheEntryCoding.decode([2] + bytes.dropFirst()) == nil, "an unknown version is refused")
    }
}
