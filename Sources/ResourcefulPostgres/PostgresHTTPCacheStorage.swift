import Crypto
import Foundation
import Logging
import NIOCore
import PostgresNIO
public import Resourceful

/// An ``HTTPCacheStorage`` in PostgreSQL shared by every instance of a fleet: an answer one
/// instance stored serves the others, with the semantics of ``InMemoryHTTPCacheStorage``.
///
/// ```swift
/// let keys = try SharedStateKeys(current: "2026-11", keys: ["2026-11": key])
/// let storage = PostgresHTTPCacheStorage(sharedState: shared, keys: keys)
/// let cache = HTTPCacheMiddleware(storage: storage, digestKey: keys.cacheDigestKey)
/// let api = API(dependencies: dependencies, middlewares: API.defaultMiddlewares(sharedState: shared.state) + [cache])
/// ```
///
/// Each entry is one row of `resourceful.http_cache`, named by the SHA-256 of its storage key;
/// each credential's answers are rows of their own. An answer that `Vary`s is kept with the
/// values of the fields it names, one variant per key, as in memory: a request with other values
/// is not served it, and the answer it gets replaces it. The entry is kept in a compact, versioned
/// byte format.
///
/// - **Per credential, sealed:** an entry whose storage key carries a credential's digest is
///   sealed with `keys` (AES-256-GCM, bound to its row's name, its key id beside it) and opened
///   only by instances holding that key. Without `keys` such entries are not stored at all, not
///   even in memory: an answer to a credential is never kept in clear. With keys, answers to
///   anonymous requests are sealed too, and an unsealed row is not served (no one without the
///   keys can plant an answer the fleet serves). Without them, answers to anonymous
///   requests are kept as they are.
/// - **Bounded:** the rows' sizes (their stored bytes and their name) add up to at most
///   `maxBytes`; a store evicts the least recently used rows to make room (a read counts as a
///   use: its time is moved forward in the same statement, at most once every 50 ms, so that an
///   entry many instances read is not rewritten for each). An entry larger than
///   `maxEntryBytes` is not stored (and the one it replaces is removed).
/// - **Expiring:** a row lives `maxAge` from when it was stored, by the database server's
///   clock; an expired row is never returned and is deleted by the statements themselves.
/// - **Atomic updates:** ``updateEntry(forKey:_:)`` writes only over the row it read (compared
///   by its digest, under the cache's write lock), else starts again from the newer row, so that
///   instances updating one entry at once lose none of the updates. An instance's own updates of
///   one key take turns, so that only other instances' can make it start again.
/// - **Unreadable rows** (altered, sealed under a key this instance lacks, of an unknown format)
///   are treated as absent and deleted; never an error holding their bytes.
/// - **When the store is unavailable** (see ``PostgresSharedState``) the instance keeps entries in
///   an ``InMemoryHTTPCacheStorage`` of its own until the store answers again; no call waits past
///   the store's statement timeout.
///
/// **Round trips per call.** ``entry(forKey:)``: one (a second only to delete an unreadable
/// row). ``store(_:forKey:)``: four — `BEGIN`, the write lock, one statement that deletes
/// expired rows, evicts and writes, `COMMIT`. ``removeEntry(forKey:)``: one.
/// ``updateEntry(forKey:_:)``: a read and the four of a store, again for each update another
/// instance made in between.
public final class PostgresHTTPCacheStorage: HTTPCacheStorage {
    /// The most bytes the rows take together.
    package let maxBytes: Int
    /// The most bytes one row takes; a larger entry is not stored.
    package let maxEntryBytes: Int
    /// How long a row lives after it was stored.
    package let maxAge: Duration

    private let store: PostgresStore
    private let keys: SharedStateKeys?
    /// What serves while the store is unavailable.
    private let fallback: InMemoryHTTPCacheStorage
    /// The turns of this instance's updates, by key.
    private let turns = Turns()

    /// A read moves a row's last use forward only when it is older than this (µs).
    static let useResolution: Int64 = 50_000
    /// PostgreSQL's code for a lock not had within `lock_timeout`.
    static let lockNotAvailable = "55P03"
    /// How many times an update starts again from a newer row before it gives up.
    static let updateAttempts = 40

    /// A storage in `sharedState`'s PostgreSQL.
    ///
    /// - Parameters:
    ///   - sharedState: the shared state whose store keeps the rows.
    ///   - keys: the keys entries for credentialed requests are sealed with; without them such
    ///     entries are not stored. Give ``HTTPCacheMiddleware`` their ``SharedStateKeys/cacheDigestKey``.
    ///   - maxBytes: the most bytes all rows take together (64 MiB unless told).
    ///   - maxEntryBytes: the most bytes one row takes (1 MiB unless told).
    ///   - maxAge: how long a row lives after it was stored (a day unless told).
    public init(
        sharedState: PostgresSharedState,
        keys: SharedStateKeys? = nil,
        maxBytes: Int = 64 * 1024 * 1024,
        maxEntryBytes: Int = 1024 * 1024,
        maxAge: Duration = .seconds(86_400)
    ) {
        store = sharedState.store
        self.keys = keys
        self.maxBytes = max(0, maxBytes)
        self.maxEntryBytes = max(0, maxEntryBytes)
        self.maxAge = max(.zero, maxAge)
        fallback = InMemoryHTTPCacheStorage(maxBytes: self.maxBytes)
    }

    /// The entry stored for `key` by any instance, if it is there, has not expired and opens;
    /// its row is now the most recently used.
    public func entry(forKey key: String) async -> HTTPCacheEntry? {
        switch await lookup(key, deadline: nil) {
        case .found(let entry, _): return entry
        case .absent: return nil
        case nil: return store.isAvailable ? nil : await fallback.entry(forKey: key)
        }
    }

    /// Stores `entry` for `key` for every instance, evicting the least recently used rows as
    /// needed; an entry that cannot be kept (too large, or credentialed without keys) removes
    /// the one stored.
    public func store(_ entry: HTTPCacheEntry, forKey key: String) async {
        guard let row = prepare(entry, forKey: key) else {
            await removeEntry(forKey: key)
            return
        }
        let written = await write(row, expecting: nil, deadline: nil)
        if written == nil, !store.isAvailable {
            if keepsInMemory(entry, forKey: key) { await fallback.store(entry, forKey: key) }
        } else {
            await fallback.removeEntry(forKey: key)
        }
    }

    /// Forgets the entry for `key`, for every instance.
    public func removeEntry(forKey key: String) async {
        await remove(key, deadline: nil)
    }

    private func remove(_ key: String, deadline: ContinuousClock.Instant?) async {
        let name = SharedStateKeys.name(key)
        _ = await store.run("cache remove", deadline: deadline) { client in
            try await client.query("DELETE FROM resourceful.http_cache WHERE name = \(name)")
            return true
        }
        await fallback.removeEntry(forKey: key)
    }

    /// Replaces the entry for `key` with what `update` makes of the one stored now, written only
    /// over the row `update` saw: when another instance wrote in between, `update` is called again
    /// with what it wrote. Gives up (returns `nil`) when the store's statement timeout has passed.
    public func updateEntry(forKey key: String, _ update: (HTTPCacheEntry?) -> HTTPCacheEntry?) async -> HTTPCacheEntry? {
        let deadline = ContinuousClock.now + store.statementTimeout
        // This instance's updates of one key take turns, so that they do not undo each other's
        // reads over the network; each turn ends by its own deadline, so none waits past its own.
        await turns.take(key)
        defer { turns.give(key) }
        guard ContinuousClock.now < deadline else { return nil }
        for _ in 0..<Self.updateAttempts {
            guard let found = await lookup(key, deadline: deadline) else { return await updateInMemory(key, update) }
            let current: HTTPCacheEntry?
            let digest: [UInt8]?
            switch found {
            case .found(let entry, let seen): (current, digest) = (entry, seen)
            case .absent: (current, digest) = (nil, nil)
            }
            guard let updated = update(current) else { return nil }
            guard let row = prepare(updated, forKey: key) else {
                await remove(key, deadline: deadline)
                return updated
            }
            switch await write(row, expecting: .some(digest), deadline: deadline) {
            case .written:
                await fallback.removeEntry(forKey: key)
                return updated
            case .conflict: continue
            case .busy: return nil
            case nil: return await updateInMemory(key, update)
            }
        }
        return nil
    }

    // MARK: - Rows

    private enum Lookup: Sendable {
        /// The entry and the SHA-256 of its row's bytes, which a conditional write compares.
        case found(HTTPCacheEntry, digest: [UInt8])
        case absent
    }

    private enum Written: Sendable {
        case written
        /// The row is no longer the one expected.
        case conflict
        /// The write lock was not had in time: nothing was written.
        case busy
    }

    /// A row ready to be written.
    private struct Row: Sendable {
        var name: String
        var keyID: String?
        var bytes: [UInt8]
        var size: Int64
    }

    private static func isCredentialed(_ key: String) -> Bool {
        key.contains(" credential:hmac-sha256:")
    }

    /// Whether the in-memory fallback may keep `entry`: never a credential's answer without keys.
    private func keepsInMemory(_ entry: HTTPCacheEntry, forKey key: String) -> Bool {
        (keys != nil || !Self.isCredentialed(key)) && entry.size + key.utf8.count <= maxEntryBytes
    }

    /// The row for `entry`, sealed whenever there are keys (so that no one without them can
    /// plant an answer the fleet serves), and always when `key` is credentialed; `nil` when it
    /// cannot be kept.
    private func prepare(_ entry: HTTPCacheEntry, forKey key: String) -> Row? {
        let name = SharedStateKeys.name(key)
        var row = Row(name: name, keyID: nil, bytes: HTTPCacheEntryCoding.encode(entry), size: 0)
        if keys != nil || Self.isCredentialed(key) {
            guard let keys, let sealed = try? keys.seal(row.bytes, context: name) else { return nil }
            row.keyID = sealed.keyID
            row.bytes = sealed.sealed
        }
        let size = row.bytes.count + name.utf8.count
        guard size <= maxEntryBytes, size <= maxBytes else { return nil }
        row.size = Int64(size)
        return row
    }

    /// The entry the row holds, or `nil` when it does not open or decode.
    private func open(keyID: String?, bytes: [UInt8], key: String, name: String) -> HTTPCacheEntry? {
        if let keyID {
            guard let keys, let opened = keys.open(bytes, keyID: keyID, context: name) else { return nil }
            return HTTPCacheEntryCoding.decode(opened)
        }
        // A credential's answer is only ever stored sealed, and so is every answer of a fleet
        // with keys: an unsealed row there was not written by an instance.
        guard !Self.isCredentialed(key), keys == nil else { return nil }
        return HTTPCacheEntryCoding.decode(bytes)
    }

    /// Reads `key`'s row (deleting it when expired, moving its use forward): `nil` when the
    /// store did not answer.
    private func lookup(_ key: String, deadline: ContinuousClock.Instant?) async -> Lookup? {
        let name = SharedStateKeys.name(key)
        let resolution = Self.useResolution
        // A row larger than any instance writes is not read (into memory) at all: as absent.
        let largest = Int64(maxEntryBytes)
        let answer = await store.run("cache read", deadline: deadline) { client -> (String?, [UInt8])? in
            let rows = try await client.query(
                """
                WITH n AS (SELECT resourceful.now_us() AS now),
                gone AS (DELETE FROM resourceful.http_cache t USING n WHERE t.name = \(name) AND t.expires_us <= n.now),
                hit AS (SELECT t.name, t.key_id, t.entry, t.used_us FROM resourceful.http_cache t, n
                    WHERE t.name = \(name) AND t.expires_us > n.now AND pg_catalog.octet_length(t.entry) <= \(largest)),
                bump AS (UPDATE resourceful.http_cache t SET used_us = n.now FROM hit, n
                    WHERE t.name = hit.name AND hit.used_us < n.now - \(resolution))
                SELECT key_id, entry FROM hit
                """)
            for try await (keyID, entry) in rows.decode((String?, ByteBuffer).self) { return (keyID, Array(buffer: entry)) }
            return nil
        }
        guard let answer else { return nil }
        guard case let (keyID, bytes)? = answer else { return .absent }
        let digest = Array(SHA256.hash(data: bytes))
        guard let entry = open(keyID: keyID, bytes: bytes, key: key, name: name) else {
            // Deleted only as it was read, so that a good row written meanwhile stays.
            let seen = ByteBuffer(bytes: digest)
            _ = await store.run("cache discard", deadline: deadline) { client in
                try await client.query("DELETE FROM resourceful.http_cache WHERE name = \(name) AND pg_catalog.sha256(entry) = \(seen)")
                return true
            }
            return .absent
        }
        return .found(entry, digest: digest)
    }

    /// Writes `row` under the write lock, deleting expired rows and evicting the least recently
    /// used ones to keep ``maxBytes``; with `expecting`, only when the live row's digest is the
    /// one given (`.some(nil)`: when there is none). `nil` when the store did not answer.
    private func write(_ row: Row, expecting: [UInt8]??, deadline: ContinuousClock.Instant?) async -> Written? {
        let checks = expecting != nil
        let expected = (expecting ?? nil).map { ByteBuffer(bytes: $0) }
        let bytes = ByteBuffer(bytes: row.bytes)
        let room = Int64(maxBytes) - row.size
        let age = PostgresRateLimitState.microseconds(maxAge)
        // A write waits for the lock at most half the statement's time, then is skipped.
        let lockTimeout = "\(max(1, Int(store.statementTimeout / .milliseconds(2))))ms"
        let logger = store.logger
        return await store.run("cache write", deadline: deadline) { client -> Written in
            do {
                return try await client.withTransaction(logger: logger) { connection -> Written in
                    // The write lock is a row's, which only the fleet's role may take.
                    try await connection.query(
                        """
                        WITH c AS (SELECT pg_catalog.set_config('lock_timeout', \(lockTimeout), true))
                        INSERT INTO resourceful.leases AS l (name, taken_us) SELECT 'http cache', resourceful.now_us() FROM c
                        ON CONFLICT (name) DO UPDATE SET taken_us = excluded.taken_us
                        """, logger: logger)
                    let rows = try await connection.query(
                        """
                        WITH n AS (SELECT resourceful.now_us() AS now),
                        live AS (SELECT pg_catalog.sha256(t.entry) AS digest FROM resourceful.http_cache t, n
                            WHERE t.name = \(row.name) AND t.expires_us > n.now),
                        ok AS (SELECT 1 AS yes WHERE NOT \(checks) OR (SELECT digest FROM live) IS NOT DISTINCT FROM \(expected)::bytea),
                        expired AS (DELETE FROM resourceful.http_cache t USING n
                            WHERE EXISTS (SELECT 1 FROM ok) AND t.name <> \(row.name) AND t.expires_us <= n.now),
                        ranked AS (SELECT t.name, sum(t.size) OVER (ORDER BY t.used_us DESC, t.name DESC) AS running
                            FROM resourceful.http_cache t, n WHERE t.name <> \(row.name) AND t.expires_us > n.now),
                        evicted AS (DELETE FROM resourceful.http_cache t USING ranked r
                            WHERE EXISTS (SELECT 1 FROM ok) AND t.name = r.name AND r.running > \(room))
                        INSERT INTO resourceful.http_cache AS t (name, key_id, entry, size, expires_us, used_us)
                            SELECT \(row.name), \(row.keyID), \(bytes), \(row.size), n.now + \(age), n.now FROM n, ok
                        ON CONFLICT (name) DO UPDATE SET key_id = excluded.key_id, entry = excluded.entry, size = excluded.size,
                            expires_us = excluded.expires_us, used_us = excluded.used_us
                        RETURNING true
                        """, logger: logger)
                    for try await _ in rows { return .written }
                    return .conflict
                }
            } catch let error as PostgresTransactionError
                where (error.closureError as? PSQLError)?.serverInfo?[.sqlState] == Self.lockNotAvailable
            {
                // Other instances held the write lock too long: this write is skipped.
                return .busy
            }
        }
    }

    /// `update` made in this instance's memory, while the store is unavailable.
    private func updateInMemory(_ key: String, _ update: (HTTPCacheEntry?) -> HTTPCacheEntry?) async -> HTTPCacheEntry? {
        guard !store.isAvailable else { return nil }
        return await fallback.updateEntry(forKey: key) { current in
            guard let updated = update(current), keepsInMemory(updated, forKey: key) else { return nil }
            return updated
        }
    }
}

/// Turns by key, first come first served: ``take(_:)`` waits until the calls that took the key's
/// turn before have given it back.
private final class Turns: Sendable {
    private let waiting = Locked<[String: [CheckedContinuation<Void, Never>]]>([:])

    func take(_ key: String) async {
        await withCheckedContinuation { (turn: CheckedContinuation<Void, Never>) in
            let now: Bool = waiting.withLock { waiting in
                guard waiting[key] != nil else {
                    waiting[key] = []
                    return true
                }
                waiting[key]?.append(turn)
                return false
            }
            if now { turn.resume() }
        }
    }

    func give(_ key: String) {
        let next: CheckedContinuation<Void, Never>? = waiting.withLock { waiting in
            guard let queue = waiting[key], let first = queue.first else {
                waiting[key] = nil
                return nil
            }
            waiting[key] = Array(queue.dropFirst())
            return first
        }
        next?.resume()
    }
}
