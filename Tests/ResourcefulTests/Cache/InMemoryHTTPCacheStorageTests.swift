import Foundation
import HTTPTypes
import NIOCore
@testable import Resourceful
import Testing

/// The in-memory storage: its byte accounting, its order of eviction, and one store that evicts
/// many entries.
@Suite struct InMemoryHTTPCacheStorageTests {
    static func entry(bytes: Int, varying: [String: String] = [:]) -> HTTPCacheEntry {
        HTTPCacheEntry(
            status: .ok,
            headerFields: [.contentType: "application/json"],
            body: ByteBuffer(repeating: UInt8(ascii: "x"), count: bytes),
            requestTime: Date(),
            responseTime: Date(),
            varyingFields: varying
        )
    }

    @Test func everyStoredByteIsCounted() async {
        let storage = InMemoryHTTPCacheStorage(maxBytes: 1 << 20)
        let entry = Self.entry(bytes: 100, varying: ["accept-language": "en-GB, fr;q=0.8"])
        let key = "https://api.example.com/v1/items"
        await storage.store(entry, forKey: key)
        let fields = "content-type".utf8.count + "application/json".utf8.count
        let varying = "accept-language".utf8.count + "en-GB, fr;q=0.8".utf8.count
        #expect(entry.size == 100 + fields + varying)
        #expect(storage.totalBytes == entry.size + key.utf8.count + InMemoryHTTPCacheStorage.entryOverhead)
        await storage.removeEntry(forKey: key)
        #expect(storage.totalBytes == 0)
        #expect(storage.count == 0)
    }

    @Test func theLeastRecentlyUsedGoFirst() async {
        let one = Self.entry(bytes: 1000)
        let slot = one.size + "k0".utf8.count + InMemoryHTTPCacheStorage.entryOverhead
        let storage = InMemoryHTTPCacheStorage(maxBytes: 3 * slot)
        for index in 0..<3 { await storage.store(one, forKey: "k\(index)") }
        _ = await storage.entry(forKey: "k0")
        await storage.store(one, forKey: "k3")
        #expect(await storage.entry(forKey: "k1") == nil)
        #expect(await storage.entry(forKey: "k0") != nil)
        #expect(await storage.entry(forKey: "k2") != nil)
        #expect(await storage.entry(forKey: "k3") != nil)
        // Replacing an entry does not count it twice.
        await storage.store(one, forKey: "k3")
        #expect(storage.totalBytes == 3 * slot)
        #expect(storage.count == 3)
    }

    /// 20,000 small entries, then one that takes the whole bound: every small one is evicted, and
    /// the storage counts only the one left. (What eviction costs at many entries is measured by
    /// the cache storage benchmark, not here.)
    @Test func oneLargeEntryEvictsEverySmallOne() async {
        let small = Self.entry(bytes: 8)
        let storage = InMemoryHTTPCacheStorage(maxBytes: 64 * 1024 * 1024)
        let keys = (0..<20_000).map { "https://api.example.com/v1/items/\($0)" }
        for key in keys { await storage.store(small, forKey: key) }
        #expect(storage.count == 20_000)
        let large = Self.entry(bytes: 64 * 1024 * 1024 - 256)
        let key = "https://api.example.com/v1/export"
        await storage.store(large, forKey: key)
        #expect(storage.count == 1)
        #expect(storage.totalBytes == large.size + key.utf8.count + InMemoryHTTPCacheStorage.entryOverhead)
        #expect(await storage.entry(forKey: key) != nil)
        for evicted in [keys[0], keys[10_000], keys[19_999]] { #expect(await storage.entry(forKey: evicted) == nil) }
    }
}
