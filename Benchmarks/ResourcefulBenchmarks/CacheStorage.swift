import Benchmark
import Foundation
import HTTPTypes
import NIOCore
import Resourceful
import Synchronization

/// `InMemoryHTTPCacheStorage` holding 100,000 entries: a lookup, a store that replaces an entry,
/// and a store that evicts the least recently used one, paired with a plain dictionary lookup
/// of the same key measured in the same iteration. Each operation should cost the same at any
/// number of entries.
func registerCacheStorageBenchmarks() {
    let count = 100_000
    let entry = HTTPCacheEntry(
        status: .ok,
        headerFields: [.contentType: "application/json", .cacheControl: "max-age=60"],
        body: ByteBuffer(string: #"{"id":1,"name":"Ada"}"#),
        requestTime: Date(),
        responseTime: Date()
    )
    let keys = (0..<count).map { "https://api.example.com/v1/users/\($0)" }
    let slot = entry.size + keys[count - 1].utf8.count + InMemoryHTTPCacheStorage.entryOverhead
    // Room for exactly `count` entries of this size: each new key evicts the oldest.
    let full = InMemoryHTTPCacheStorage(maxBytes: slot * count)
    let dictionary = Dictionary(uniqueKeysWithValues: keys.map { ($0, entry) })
    let filled = Task { for key in keys { await full.store(entry, forKey: key) } }
    let next = Counter()
    Paired(names: ["Dictionary lookup", "lookup", "store replacing", "store evicting"]) { variant in
        _ = await filled.value
        let key = keys[next.advance() % count]
        switch variant {
        case 0: blackHole(dictionary[key])
        case 1: blackHole(await full.entry(forKey: key))
        case 2: await full.store(entry, forKey: key)
        default: await full.store(entry, forKey: "https://api.example.com/v1/new/\(next.advance())")
        }
    }.register("cache storage at 100k entries paired", repeats: 100, maxDuration: .seconds(3))
}

/// A counter shared by the iterations.
final class Counter: Sendable {
    private let value = Atomic(0)
    func advance() -> Int { value.wrappingAdd(1, ordering: .relaxed).newValue }
}
