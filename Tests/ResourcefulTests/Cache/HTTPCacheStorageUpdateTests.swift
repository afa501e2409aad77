import Foundation
import HTTPTypes
import NIOCore
import Resourceful
import Testing

/// The default ``HTTPCacheStorage/updateEntry(forKey:_:)`` of a storage that cannot read and
/// write in one step never writes over an entry stored after it read: it reads again before it
/// writes and makes its update again from the newer entry.
@Suite struct HTTPCacheStorageUpdateTests {
    /// A storage with only `entry`, `store` and `removeEntry`: `updateEntry` is the protocol's
    /// default. `afterRead` runs once after the next read, as another call's store that comes
    /// between a read and a write.
    final class TwoStepStorage: HTTPCacheStorage {
        let entries = Locked<[String: HTTPCacheEntry]>([:])
        let afterRead = Locked<[@Sendable (TwoStepStorage) -> Void]>([])
        let stores = Locked(0)

        func entry(forKey key: String) async -> HTTPCacheEntry? {
            let found = entries.withLock { $0[key] }
            let hook = afterRead.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            hook?(self)
            return found
        }

        func store(_ entry: HTTPCacheEntry, forKey key: String) async {
            stores.withLock { $0 += 1 }
            entries.withLock { $0[key] = entry }
        }

        func removeEntry(forKey key: String) async {
            entries.withLock { $0[key] = nil }
        }
    }

    static func entry(_ tag: String, version: Int = 0) -> HTTPCacheEntry {
        HTTPCacheEntry(
            status: .ok,
            headerFields: [.eTag: "\"\(tag)\"", HTTPField.Name("X-Version")!: String(version)],
            body: ByteBuffer(string: tag),
            requestTime: Date(timeIntervalSince1970: 0),
            responseTime: Date(timeIntervalSince1970: 0)
        )
    }

    static func version(_ entry: HTTPCacheEntry?) -> Int {
        entry?.headerFields[HTTPField.Name("X-Version")!].flatMap { Int($0) } ?? 0
    }

    @Test func aStoreBetweenTheReadAndTheWriteIsNotLost() async {
        let storage = TwoStepStorage()
        storage.entries.withLock { $0["k"] = Self.entry("v1") }
        // Another call stores v2 right after this update read v1.
        storage.afterRead.withLock { $0 = [{ storage in storage.entries.withLock { $0["k"] = Self.entry("v2") } }] }
        // A 304 for v1: it refreshes v1 only.
        let updated = await storage.updateEntry(forKey: "k") { current in
            guard let current, current.headerFields[.eTag] == "\"v1\"" else { return nil }
            var refreshed = current
            refreshed.headerFields[.cacheControl] = "max-age=600"
            return refreshed
        }
        #expect(updated == nil)
        let stored = await storage.entry(forKey: "k")
        #expect(stored?.headerFields[.eTag] == "\"v2\"")
        #expect(stored?.headerFields[.cacheControl] == nil)
    }

    @Test func anUpdateIsMadeAgainFromANewerEntry() async {
        let storage = TwoStepStorage()
        storage.entries.withLock { $0["k"] = Self.entry("a", version: 1) }
        storage.afterRead.withLock { $0 = [{ storage in storage.entries.withLock { $0["k"] = Self.entry("b", version: 5) } }] }
        let updated = await storage.updateEntry(forKey: "k") { current in
            Self.entry("c", version: Self.version(current) + 1)
        }
        #expect(Self.version(updated) == 6)
        #expect(Self.version(await storage.entry(forKey: "k")) == 6)
        #expect(storage.stores.withLock { $0 } == 1)
    }

    @Test func anEntryThatKeepsChangingIsLeftAsItIs() async {
        let storage = TwoStepStorage()
        storage.entries.withLock { $0["k"] = Self.entry("a", version: 1) }
        // Another call stores after every read.
        storage.afterRead.withLock { hooks in
            hooks = (2...20).map { version in
                { storage in storage.entries.withLock { $0["k"] = Self.entry("x", version: version * 100) } }
            }
        }
        let updated = await storage.updateEntry(forKey: "k") { current in
            Self.entry("c", version: Self.version(current) + 1)
        }
        #expect(updated == nil)
        #expect(storage.stores.withLock { $0 } == 0)
        #expect(Self.version(await storage.entry(forKey: "k")) % 100 == 0)
    }

    @Test func concurrentUpdatesOfTheInMemoryStorageAreAllKept() async {
        let storage: any HTTPCacheStorage = InMemoryHTTPCacheStorage()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    _ = await storage.updateEntry(forKey: "k") { current in Self.entry("n", version: Self.version(current) + 1) }
                }
            }
        }
        #expect(Self.version(await storage.entry(forKey: "k")) == 200)
    }
}
