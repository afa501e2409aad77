/// An ``HTTPCacheStorage`` in memory, bounded by bytes: when an entry would take it past
/// ``maxBytes``, the least recently used entries are evicted; an entry larger than the bound is
/// not stored.
public final class InMemoryHTTPCacheStorage: HTTPCacheStorage {
    private struct Slot {
        var entry: HTTPCacheEntry
        var size: Int
        var lastUse: UInt64
    }

    private struct State {
        var slots: [String: Slot] = [:]
        var bytes = 0
        var clock: UInt64 = 0
    }

    /// The most bytes the entries take together.
    public let maxBytes: Int
    private let state = Locked(State())

    /// A storage of at most `maxBytes` (10 MiB unless told).
    public init(maxBytes: Int = 10 * 1024 * 1024) {
        self.maxBytes = max(0, maxBytes)
    }

    /// The bytes the entries take.
    package var totalBytes: Int { state.withLock { $0.bytes } }

    /// How many entries are stored.
    package var count: Int { state.withLock { $0.slots.count } }

    /// The entry for `key`, now the most recently used.
    public func entry(forKey key: String) async -> HTTPCacheEntry? {
        state.withLock { state in
            guard var slot = state.slots[key] else { return nil }
            state.clock += 1
            slot.lastUse = state.clock
            state.slots[key] = slot
            return slot.entry
        }
    }

    /// Stores `entry`, evicting the least recently used entries as needed.
    public func store(_ entry: HTTPCacheEntry, forKey key: String) async {
        let size = entry.size + key.utf8.count
        state.withLock { state in
            if let old = state.slots.removeValue(forKey: key) { state.bytes -= old.size }
            guard size <= maxBytes else { return }
            while state.bytes + size > maxBytes, let oldest = state.slots.min(by: { $0.value.lastUse < $1.value.lastUse }) {
                state.slots[oldest.key] = nil
                state.bytes -= oldest.value.size
            }
            state.clock += 1
            state.slots[key] = Slot(entry: entry, size: size, lastUse: state.clock)
            state.bytes += size
        }
    }

    /// Forgets the entry for `key`.
    public func removeEntry(forKey key: String) async {
        state.withLock { state in
            if let old = state.slots.removeValue(forKey: key) { state.bytes -= old.size }
        }
    }
}
