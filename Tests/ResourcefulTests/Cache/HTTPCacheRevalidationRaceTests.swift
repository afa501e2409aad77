import Foundation
import HTTPTypes
@testable import Resourceful
import ResourcefulTesting
import Testing

/// A late `304` updates only the stored response its validator names as stored when it arrives
/// (RFC 9111 §4.3.4), and `Vary` on a credential field keeps no credential in the cache.
@Suite struct HTTPCacheRevalidationRaceTests {
    struct Document: Codable, Sendable, Equatable { var version: String }

    /// A storage that keeps every entry it is given, to look into.
    final class InspectedStorage: HTTPCacheStorage {
        let inner = InMemoryHTTPCacheStorage()
        let stored = Locked<[HTTPCacheEntry]>([])
        func entry(forKey key: String) async -> HTTPCacheEntry? { await inner.entry(forKey: key) }
        func store(_ entry: HTTPCacheEntry, forKey key: String) async {
            stored.withLock { $0.append(entry) }
            await inner.store(entry, forKey: key)
        }
        func removeEntry(forKey key: String) async { await inner.removeEntry(forKey: key) }
        func updateEntry(forKey key: String, _ update: (HTTPCacheEntry?) -> HTTPCacheEntry?) async -> HTTPCacheEntry? {
            let updated = await inner.updateEntry(forKey: key, update)
            if let updated { stored.withLock { $0.append(updated) } }
            return updated
        }
    }

    static func document(_ version: String, cacheControl: String) throws -> MockResponse {
        var response = try MockResponse.json(Document(version: version))
        response.headerFields[.eTag] = "\"\(version)\""
        response.headerFields[.cacheControl] = cacheControl
        return response
    }

    @Test func aLate304DoesNotOverwriteANewerEntry() async throws {
        try await Harness.run(authorization: nil) { (harness: inout Harness) async throws in
            let calls = Locked(0)
            harness.server.route(.get, "/v1/doc") { request in
                let call = calls.withLock { count -> Int in
                    count += 1
                    return count
                }
                switch call {
                case 1:
                    return try Self.document("v1", cacheControl: "max-age=0")
                case 2:
                    // r1's revalidation of v1: answered late, and fresh for ten minutes.
                    var notModified = MockResponse.status(.notModified)
                    notModified.headerFields[.eTag] = "\"v1\""
                    notModified.headerFields[.cacheControl] = "max-age=600"
                    return notModified.delayed(by: .milliseconds(600))
                default:
                    // r2 (and any later call) finds v2.
                    if request.headerFields[.ifNoneMatch] == "\"v2\"" {
                        var notModified = MockResponse.status(.notModified)
                        notModified.headerFields[.eTag] = "\"v2\""
                        return notModified
                    }
                    return try Self.document("v2", cacheControl: "max-age=0")
                }
            }
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [HTTPCacheMiddleware()])
            let show = AdHocRequest<Document, Empty>(.show, "doc")
            #expect(try await api.call(show).version == "v1")
            let r1 = Task { try await api.call(show) }
            // r2 goes out once r1's revalidation reached the server.
            let deadline = ContinuousClock.now + .seconds(10)
            while harness.server.requests.count < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            #expect(harness.server.requests.count == 2)
            #expect(try await api.call(show).version == "v2")
            // r1 is answered with what it revalidated.
            #expect(try await r1.value.version == "v1")
            // r3: the stored v2 stays; the late 304 for v1 did not bring v1 back for ten minutes.
            #expect(try await api.call(show).version == "v2")
            #expect(harness.server.requests.last?.headerFields[.ifNoneMatch] == "\"v2\"")
        }
    }

    @Test func a304RefreshesTheEntryItNames() async throws {
        try await Harness.run(authorization: nil) { (harness: inout Harness) async throws in
            harness.server.stub(.get, "/v1/doc", try Self.document("v1", cacheControl: "max-age=0"))
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [HTTPCacheMiddleware()])
            let show = AdHocRequest<Document, Empty>(.show, "doc")
            #expect(try await api.call(show).version == "v1")
            var notModified = MockResponse.status(.notModified)
            notModified.headerFields[.cacheControl] = "max-age=600"
            harness.server.stub(.get, "/v1/doc", notModified)
            #expect(try await api.call(show).version == "v1")
            // Fresh now: answered from the cache.
            #expect(try await api.call(show).version == "v1")
            #expect(harness.server.requests.count == 2)
        }
    }

    @Test func fieldsThatCarryACredentialAreNotStored() async throws {
        try await Harness.run(authorization: nil) { (harness: inout Harness) async throws in
            var response = try Self.document("v1", cacheControl: "max-age=0")
            response.headerFields[.setCookie] = "sid=cookie-SECRET-1"
            response.headerFields[HTTPField.Name("X-Session-Token")!] = "token-SECRET-2"
            harness.server.stub(.get, "/v1/doc", response)
            let storage = InspectedStorage()
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [HTTPCacheMiddleware(storage: storage, storageTimeout: .seconds(30))])
            let show = AdHocRequest<Document, Empty>(.show, "doc")
            #expect(try await api.call(show).version == "v1")
            var notModified = MockResponse.status(.notModified)
            notModified.headerFields[.setCookie] = "sid=cookie-SECRET-3"
            harness.server.stub(.get, "/v1/doc", notModified)
            #expect(try await api.call(show).version == "v1")
            let entries = storage.stored.withLock { $0 }
            #expect(entries.count == 2)
            for entry in entries {
                for field in entry.headerFields { #expect(!field.value.contains("SECRET"), "\(field.name) was stored") }
                #expect(entry.headerFields[.eTag] == "\"v1\"")
            }
        }
    }

    @Test func theUserinfoOfAURLIsACredentialAndNeverPartOfAKey() {
        let redactor = Redactor(settings: APIConfig.LogSettings())
        let alice = CacheKey(target: RequestTarget(parsing: "https://alice:pw-SECRET-1@h.example/x"), headerFields: [:], redactor: redactor)
        let bob = CacheKey(target: RequestTarget(parsing: "https://bob:pw-SECRET-2@h.example/x"), headerFields: [:], redactor: redactor)
        let anonymous = CacheKey(target: RequestTarget(parsing: "https://h.example/x"), headerFields: [:], redactor: redactor)
        #expect(alice.isCredentialed && bob.isCredentialed && !anonymous.isCredentialed)
        #expect(Set([alice.storageKey, bob.storageKey, anonymous.storageKey]).count == 3)
        for key in [alice.storageKey, bob.storageKey, alice.anonymousKey] { #expect(!key.contains("SECRET"), "\(key)") }
    }

    @Test(arguments: ["Authorization", "Cookie"])
    func varyOnACredentialKeepsDigestsOnly(field: String) async throws {
        try await Harness.run(authorization: nil) { (harness: inout Harness) async throws in
            harness.dependencies.apiConfig.cache.storesAuthorizedResponses = true
            harness.server.route(.get, "/v1/doc") { request in
                var response = try Self.document(request.headerFields[HTTPField.Name(field)!] ?? "none", cacheControl: "max-age=60")
                response.headerFields[.vary] = field
                return response
            }
            let storage = InspectedStorage()
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [HTTPCacheMiddleware(storage: storage, storageTimeout: .seconds(30))])
            var alice = AdHocRequest<Document, Empty>(.show, "doc")
            alice.headers = [field: "vary-SECRET-alice"]
            var bob = alice
            bob.headers = [field: "vary-SECRET-bob"]
            #expect(try await api.call(alice).version == "vary-SECRET-alice")
            #expect(try await api.call(alice).version == "vary-SECRET-alice")
            #expect(try await api.call(bob).version == "vary-SECRET-bob")
            #expect(harness.server.requests.count == 2, "the digest matches the same value, and only it")
            let entries = storage.stored.withLock { $0 }
            #expect(!entries.isEmpty)
            for entry in entries {
                let value = try #require(entry.varyingFields[field.lowercased()])
                #expect(!value.contains("SECRET"))
                #expect(value.hasPrefix("hmac-sha256:") && value.utf8.count == 12 + 64)
            }
        }
    }
}
