/// An ``HTTPCacheStorage`` in memory, bounded by bytes: when an entry would take it past
/// ``maxBytes``, the least recently used entries are evicted; an entry larger than the bound is
/// not stored.
///
/// Every operation costs the same whatever the number of entries: the entries are kept in a
/// doubly linked list in order of use, so the least recently used one is found without a search.
/// An entry counts its body, field names and values, the request values it varies on, its key and
/// ``entryOverhead`` bytes for its bookkeeping.
public final class InMemoryHTTPCacheStorage: HTTPCacheStorage {
    /// The bytes an entry counts besides its content: its place in the list and the dictionary.
    public static let entryOverhead = 128

    /// The most bytes the entries take together.
    public let maxBytes: Int
    private let state = Locked(LRUList())

    /// A storage of at most `maxBytes` (10 MiB unless told).
    public init(maxBytes: Int = 10 * 1024 * 1024) {
        self.maxBytes = max(0, maxBytes)
    }

    /// The bytes the entries take.
    package var totalBytes: Int { state.withLock { $0.bytes } }

    /// How many entries are stored.
    package var count: Int { state.withLock { $0.count } }

    /// The entry for `key`, now the most recently used.
    public func entry(forKey key: String) async -> HTTPCacheEntry? {
        state.withLock { $0.use(key) }
    }

    /// Stores `entry`, evicting the least recently used entries as needed.
    public func store(_ entry: HTTPCacheEntry, forKey key: String) async {
        state.withLock { store(entry, forKey: key, in: &$0) }
    }

    /// Replaces the entry for `key` with what `update` makes of the one stored now, in one step
    /// under the lock: no other store comes between the read and the write.
    public func updateEntry(forKey key: String, _ update: (HTTPCacheEntry?) -> HTTPCacheEntry?) async -> HTTPCacheEntry? {
        state.withLock { list in
            guard let updated = update(list.use(key)) else { return nil }
            store(updated, forKey: key, in: &list)
            return updated
        }
    }

    private func store(_ entry: HTTPCacheEntry, forKey key: String, in list: inout LRUList) {
        let size = entry.size + key.utf8.count + Self.entryOverhead
        list.remove(key)
        guard size <= maxBytes else { return }
        while list.bytes + size > maxBytes, list.removeLeastRecentlyUsed() {}
        list.insert(entry, forKey: key, size: size)
    }

    /// Forgets the entry for `key`.
    public func removeEntry(forKey key: String) async {
        state.withLock { $0.remove(key) }
    }
}

/// Entries by key, in a doubly linked list from the most to the least recently used, its links
/// indices into one array (freed places reused): constant time for each operation.
struct LRUList: Sendable {
    private struct Node: Sendable {
        var key: String
        var entry: HTTPCacheEntry
        var size: Int
        var newer: Int?
        var older: Int?
    }

    private var nodes: [Node?] = []
    private var free: [Int] = []
    private var index: [String: Int] = [:]
    private var newest: Int?
    private var oldest: Int?
    private(set) var bytes = 0

    var count: Int { index.count }

    /// The entry for `key`, moved to the front.
    mutating func use(_ key: String) -> HTTPCacheEntry? {
        guard let position = index[key], let node = nodes[position] else { return nil }
        unlink(position)
        linkAsNewest(position)
        return node.entry
    }

    mutating func insert(_ entry: HTTPCacheEntry, forKey key: String, size: Int) {
        let node = Node(key: key, entry: entry, size: size)
        let position: Int
        if let reused = free.popLast() {
            position = reused
            nodes[position] = node
        } else {
            position = nodes.count
            nodes.append(node)
        }
        index[key] = position
        bytes += size
        linkAsNewest(position)
    }

    mutating func remove(_ key: String) {
        guard let position = index.removeValue(forKey: key) else { return }
        release(position)
    }

    /// Removes the least recently used entry; false when there is none.
    mutating func removeLeastRecentlyUsed() -> Bool {
        guard let position = oldest, let node = nodes[position] else { return false }
        index[node.key] = nil
        release(position)
        return true
    }

    private mutating func release(_ position: Int) {
        unlink(position)
        bytes -= nodes[position]?.size ?? 0
        nodes[position] = nil
        free.append(position)
    }

    private mutating func unlink(_ position: Int) {
        guard let node = nodes[position] else { return }
        if let newer = node.newer { nodes[newer]?.older = node.older } else { newest = node.older }
        if let older = node.older { nodes[older]?.newer = node.newer } else { oldest = node.newer }
        nodes[position]?.newer = nil
        nodes[position]?.older = nil
    }

    private mutating func linkAsNewest(_ position: Int) {
        nodes[position]?.older = newest
        nodes[position]?.newer = nil
        if let newest { nodes[newest]?.newer = position }
        newest = position
        if oldest == nil { oldest = position }
    }
}
