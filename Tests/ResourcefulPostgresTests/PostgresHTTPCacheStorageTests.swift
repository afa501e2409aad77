import Foundation
import HTTPTypes
import Logging
import NIOCore
import PostgresNIO
import ProcessTestSupport
import Resourceful
import Testing

@testable import ResourcefulPostgres

/// The HTTP cache's rows, shared by instances each with its own client. Serialized: one test
/// bounds the whole table. The end-to-end test is in `PostgresHTTPCacheStorageFleetTests.swift`.
@Suite(.postgres, .serialized)
struct PostgresHTTPCacheStorageTests {
    static func keys(_ material: UInt8 = 7) throws -> SharedStateKeys {
        try SharedStateKeys(current: "k1", keys: ["k1": Array(repeating: material, count: 32)])
    }

    /// Instances whose schema is ready and whose statements may take 5 s, so that a machine
    /// busy with other suites does not make the store count as unavailable.
    static func withStorageInstances<T: Sendable>(_ count: Int, _ body: @Sendable ([PostgresSharedState]) async throws -> T)
        async throws -> T
    {
        var options = PostgresSharedState.Options()
        options.statementTimeout = .seconds(5)
        return try await withInstances(count, options: options) { instances in
            for instance in instances { try await instance.prepare() }
            return try await body(instances)
        }
    }

    static func anonymousKey() -> String { "http://api.example.test/v1/items/\(UUID().uuidString)" }
    static func credentialedKey() -> String { anonymousKey() + " credential:hmac-sha256:" + String(repeating: "ab", count: 32) }

    static func entry(body: String, fields: [(String, String)] = [("Cache-Control", "max-age=60")], varying: [String: String] = [:])
        -> HTTPCacheEntry
    {
        var headerFields = HTTPFields()
        for (name, value) in fields { if let name = HTTPField.Name(name) { headerFields.append(HTTPField(name: name, value: value)) } }
        return HTTPCacheEntry(
            status: .ok, headerFields: headerFields, body: ByteBuffer(string: body),
            requestTime: Date(timeIntervalSince1970: 1_800_000_000.25), responseTime: Date(timeIntervalSince1970: 1_800_000_000.5),
            varyingFields: varying
        )
    }

    static func value(_ entry: HTTPCacheEntry?, _ name: String) -> String? {
        entry?.headerFields.first { $0.name.canonicalName == name.lowercased() }?.value
    }

    /// How many rows `key` has (-1 when the table could not be read).
    static func count(_ key: String) async -> Int {
        let found = try? await rows("SELECT count(*)::text FROM resourceful.http_cache WHERE name = '\(SharedStateKeys.name(key))'")
        return Int(found?.first ?? "") ?? -1
    }

    @Test("Instance B reads what A stored; entries of other credentials and of anonymous calls stay side by side")
    func anotherInstanceReadsTheEntry() async throws {
        let keys = try Self.keys()
        try await Self.withStorageInstances(2) { instances in
            let a = PostgresHTTPCacheStorage(sharedState: instances[0], keys: keys)
            let b = PostgresHTTPCacheStorage(sharedState: instances[1], keys: keys)
            let anonymous = Self.anonymousKey()
            let alice = anonymous + " credential:hmac-sha256:" + String(repeating: "a1", count: 32)
            let bob = anonymous + " credential:hmac-sha256:" + String(repeating: "b2", count: 32)
            let fields = [("Content-Type", "application/json"), ("Vary", "Accept-Language"), ("ETag", "\"v1\""), ("X-Two", "1"), ("x-two", "2")]
            let shared = Self.entry(body: "{\"anonymous\":true}", fields: fields, varying: ["accept-language": "fr"])
            await a.store(shared, forKey: anonymous)
            await a.store(Self.entry(body: "alice's"), forKey: alice)
            await b.store(Self.entry(body: "bob's"), forKey: bob)
            #expect(await b.entry(forKey: anonymous) == shared)
            #expect(await b.entry(forKey: alice)?.body == ByteBuffer(string: "alice's"))
            #expect(await a.entry(forKey: bob)?.body == ByteBuffer(string: "bob's"))
            await b.removeEntry(forKey: alice)
            #expect(await a.entry(forKey: alice) == nil)
            #expect(await a.entry(forKey: bob) != nil)
            #expect(instances.allSatisfy { $0.isAvailable })
        }
    }

    @Test("A row larger than any instance writes (another process's) is passed over without being read, and the store stays in use")
    func anOversizedRowIsNotRead() async throws {
        try await Self.withStorageInstances(1) { instances in
            let storage = PostgresHTTPCacheStorage(sharedState: instances[0], maxEntryBytes: 64 * 1024)
            let key = Self.anonymousKey()
            await storage.store(Self.entry(body: "small"), forKey: key)
            #expect(await storage.entry(forKey: key)?.body == ByteBuffer(string: "small"))
            // Another process makes the row 8 MiB: not read (not into memory), as if absent.
            _ = try await rows(
                """
                UPDATE resourceful.http_cache SET entry = entry || pg_catalog.decode(pg_catalog.repeat('00', 8388608), 'hex')
                WHERE name = '\(SharedStateKeys.name(key))' RETURNING name
                """)
            #expect(await storage.entry(forKey: key) == nil)
            #expect(instances[0].isAvailable)
            // Passed over, not read: a row read and found bad would have been deleted.
            let size = try await rows("SELECT pg_catalog.octet_length(entry)::text FROM resourceful.http_cache WHERE name = '\(SharedStateKeys.name(key))'")
            #expect(size.count == 1 && (Int(size[0]) ?? 0) > 8_388_608)
            // The next answer stored replaces it.
            await storage.store(Self.entry(body: "again"), forKey: key)
            #expect(await storage.entry(forKey: key)?.body == ByteBuffer(string: "again"))
        }
    }

    @Test("A credential's entry is sealed: no body or field value in clear; it opens only under the same keys")
    func aCredentialedEntryIsSealed() async throws {
        let key = Self.credentialedKey()
        let name = SharedStateKeys.name(key)
        try await Self.withStorageInstances(3) { instances in
            let a = PostgresHTTPCacheStorage(sharedState: instances[0], keys: try Self.keys())
            let b = PostgresHTTPCacheStorage(sharedState: instances[1], keys: try Self.keys())
            let other = PostgresHTTPCacheStorage(sharedState: instances[2], keys: try Self.keys(9))
            let entry = Self.entry(body: "account-body-d41d8c", fields: [("X-Account", "acct-value-77e1"), ("Cache-Control", "private")])
            await a.store(entry, forKey: key)
            let stored = try await rows("SELECT encode(entry, 'escape') || ' ' || coalesce(key_id, 'NULL') FROM resourceful.http_cache WHERE name = '\(name)'")
            #expect(stored.count == 1)
            let row = stored.joined()
            let inClear = ["account-body-d41d8c", "acct-value-77e1", "X-Account", "private"].filter { row.contains($0) }.count
            #expect(inClear == 0, "a value of the entry is in the row in clear")
            #expect(stored.first?.hasSuffix(" k1") == true, "the row names its key")
            #expect(await b.entry(forKey: key) == entry)
            // Other keys: absent, and the row that does not open is deleted.
            #expect(await other.entry(forKey: key) == nil)
            #expect(await Self.count(key) == 0)
            // With keys, an anonymous entry is sealed too: no one without them plants one.
            let anonymous = Self.anonymousKey()
            await a.store(Self.entry(body: "public-body"), forKey: anonymous)
            let plain = try await rows(
                "SELECT encode(entry, 'escape') || ' ' || coalesce(key_id, 'NULL') FROM resourceful.http_cache WHERE name = '\(SharedStateKeys.name(anonymous))'")
            #expect(plain.first?.contains("public-body") == false)
            #expect(plain.first?.hasSuffix(" k1") == true)
            #expect(await b.entry(forKey: anonymous)?.body == ByteBuffer(string: "public-body"))
        }
    }

    @Test("Without keys a credential's entry is not stored at all, and an unsealed row is not served where there are keys")
    func noKeysNoCredentialedEntry() async throws {
        let key = Self.credentialedKey()
        try await Self.withStorageInstances(2) { instances in
            let a = PostgresHTTPCacheStorage(sharedState: instances[0])
            let b = PostgresHTTPCacheStorage(sharedState: instances[1], keys: try Self.keys())
            await a.store(Self.entry(body: "secret-body"), forKey: key)
            _ = await a.updateEntry(forKey: key) { _ in Self.entry(body: "secret-body") }
            #expect(await Self.count(key) == 0)
            #expect(await a.entry(forKey: key) == nil)
            #expect(await b.entry(forKey: key) == nil)
            // An anonymous one is, as it is; an instance with keys does not serve a row left
            // unsealed (one without them, or planted by hand).
            let anonymous = Self.anonymousKey()
            await a.store(Self.entry(body: "open"), forKey: anonymous)
            #expect(await a.entry(forKey: anonymous)?.body == ByteBuffer(string: "open"))
            #expect(await b.entry(forKey: anonymous) == nil)
        }
    }

    @Test("The rows stay under maxBytes: a store evicts the least recently read")
    func leastRecentlyUsedRowsAreEvicted() async throws {
        _ = try await rows("DELETE FROM resourceful.http_cache")
        let keys = (0..<4).map { _ in Self.anonymousKey() }
        let body = String(repeating: "x", count: 1000)
        try await Self.withStorageInstances(2) { instances in
            // Every entry takes as many bytes as the first.
            await PostgresHTTPCacheStorage(sharedState: instances[0]).store(Self.entry(body: body), forKey: keys[0])
            let size = try #require(Int(try await rows("SELECT size::text FROM resourceful.http_cache").first ?? ""))
            let maxBytes = 3 * size + size / 2
            let a = PostgresHTTPCacheStorage(sharedState: instances[0], maxBytes: maxBytes)
            let b = PostgresHTTPCacheStorage(sharedState: instances[1], maxBytes: maxBytes)
            await a.store(Self.entry(body: body), forKey: keys[1])
            await b.store(Self.entry(body: body), forKey: keys[2])
            // The three were used long ago, in their order; then B reads the first.
            _ = try await rows("UPDATE resourceful.http_cache SET used_us = used_us - 10000000")
            #expect(await b.entry(forKey: keys[0]) != nil)
            await a.store(Self.entry(body: body), forKey: keys[3])
            #expect(await Self.count(keys[1]) == 0, "the least recently used entry stays")
            for kept in [keys[0], keys[2], keys[3]] { #expect(await Self.count(kept) == 1) }
            let total = try #require(Int(try await rows("SELECT sum(size)::text FROM resourceful.http_cache").first ?? ""))
            #expect(total <= maxBytes)
        }
    }

    @Test("An entry over maxEntryBytes is not stored, and the one it replaces is removed")
    func anOversizeEntryIsNotStored() async throws {
        let key = Self.anonymousKey()
        try await Self.withStorageInstances(1) { instances in
            let storage = PostgresHTTPCacheStorage(sharedState: instances[0], maxEntryBytes: 2000)
            await storage.store(Self.entry(body: "small"), forKey: key)
            #expect(await Self.count(key) == 1)
            await storage.store(Self.entry(body: String(repeating: "y", count: 5000)), forKey: key)
            #expect(await Self.count(key) == 0)
            #expect(await storage.entry(forKey: key) == nil)
        }
    }

    @Test("A row lives maxAge by the server's clock; an expired row is not returned and is deleted")
    func anExpiredRowIsNotReturned() async throws {
        let key = Self.anonymousKey()
        let name = SharedStateKeys.name(key)
        try await Self.withStorageInstances(2) { instances in
            let a = PostgresHTTPCacheStorage(sharedState: instances[0], maxAge: .seconds(60))
            let b = PostgresHTTPCacheStorage(sharedState: instances[1], maxAge: .seconds(60))
            await a.store(Self.entry(body: "soon stale"), forKey: key)
            let lifetime = try await rows("SELECT (expires_us - used_us)::text FROM resourceful.http_cache WHERE name = '\(name)'")
            #expect(lifetime == ["60000000"])
            _ = try await rows("UPDATE resourceful.http_cache SET expires_us = resourceful.now_us() - 1 WHERE name = '\(name)'")
            #expect(await b.entry(forKey: key) == nil)
            #expect(await Self.count(key) == 0)
        }
    }

    @Test("updateEntry is atomic across instances: 2 × 10 concurrent increments make 20")
    func concurrentUpdatesLoseNothing() async throws {
        let key = Self.credentialedKey()
        try await Self.withStorageInstances(2) { instances in
            let storages = try instances.map { PostgresHTTPCacheStorage(sharedState: $0, keys: try Self.keys()) }
            let results = await withTaskGroup(of: Bool.self) { group in
                for storage in storages {
                    for _ in 0..<10 {
                        group.addTask {
                            await storage.updateEntry(forKey: key) { current in
                                let count = Self.value(current, "X-Count").flatMap { Int($0) } ?? 0
                                return Self.entry(body: "counter", fields: [("X-Count", String(count + 1))])
                            } != nil
                        }
                    }
                }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(results.allSatisfy { $0 })
            let final = await storages[1].entry(forKey: key)
            #expect(Self.value(final, "X-Count") == "20")
        }
    }

    @Test("A corrupted row reads as absent and is deleted, for an anonymous and a sealed entry")
    func aCorruptedRowIsAbsent() async throws {
        let anonymous = Self.anonymousKey()
        let credentialed = Self.credentialedKey()
        try await Self.withStorageInstances(2) { instances in
            let a = PostgresHTTPCacheStorage(sharedState: instances[0], keys: try Self.keys())
            let b = PostgresHTTPCacheStorage(sharedState: instances[1], keys: try Self.keys())
            for key in [anonymous, credentialed] {
                await a.store(Self.entry(body: "fine"), forKey: key)
                _ = try await rows(
                    "UPDATE resourceful.http_cache SET entry = '\\x01ffffffff00'::bytea WHERE name = '\(SharedStateKeys.name(key))'")
                #expect(await b.entry(forKey: key) == nil)
                #expect(await Self.count(key) == 0)
                // It is written again as usual.
                #expect(await b.updateEntry(forKey: key) { _ in Self.entry(body: "again") }?.body == ByteBuffer(string: "again"))
                #expect(await a.entry(forKey: key)?.body == ByteBuffer(string: "again"))
            }
            #expect(instances.allSatisfy { $0.isAvailable })
        }
    }
}
