import Foundation
import Logging
import PostgresNIO
public import Resourceful

/// OAuth 2 access tokens shared by a fleet through PostgreSQL: one token request per token for
/// the whole fleet, however many instances and calls need it at once.
///
/// An instance reads the token another kept (one round trip, only when its own copy is due:
/// the OAuth 2 storage keeps the token in memory until its renewal, so a call with a token in
/// hand costs no round trip). When none is kept, it takes the fleet's lease for that token — the
/// lock of the token's row in `resourceful.leases`, held by a transaction, which works behind a
/// pooler in transaction mode and which no role without rights on the table can take — reads again (another instance may have kept one while this one waited),
/// asks the authorization server only when still needed, keeps the answer and releases the lease
/// with the transaction. The others wait for the lease within their deadline and for
/// ``PostgresSharedState/Options/tokenLease`` (PostgreSQL's `lock_timeout`; with the store's
/// statement time on top when it hangs); a holder that dies (even by `kill -9`) loses its
/// connection, and with it the lease, at once. After a lease held longer (a holder that hangs, or
/// a session that is not one of the fleet's own builds), a call takes a token kept meanwhile, or
/// else does what ``WhenUnavailable`` says.
///
/// Tokens are sealed (AES-256-GCM under ``SharedStateKeys``, bound to their row), and rows are
/// named by a digest of what the token is for: no table, log line or error holds a token.
///
/// **When the store fails**: with ``WhenUnavailable/askAlone`` (the default) an instance that
/// cannot use the store asks for its own token (one warning per outage); with
/// ``WhenUnavailable/fail`` the call fails with ``PostgresSharedStateError`` instead, for an
/// authorization server that must see one request per fleet.
public final class PostgresTokenCache: SharedTokenCache {
    /// What an instance does when the store cannot be used.
    public enum WhenUnavailable: Sendable {
        /// Asks for its own token: the fleet may send more than one request.
        case askAlone
        /// Fails the call with ``PostgresSharedStateError``.
        case fail
    }

    private let store: PostgresStore
    private let keys: SharedStateKeys
    private let whenUnavailable: WhenUnavailable
    /// How long a call waits for another instance's lease.
    private let leaseTime: Duration
    /// When a lease held past ``leaseTime`` was last said (once a minute at most).
    private let overstayed = Locked<ContinuousClock.Instant?>(nil)

    /// Tokens kept through `sharedState`'s connections, sealed with `keys`.
    public init(sharedState: PostgresSharedState, keys: SharedStateKeys, whenUnavailable: WhenUnavailable = .askAlone) {
        store = sharedState.store
        self.keys = keys
        self.whenUnavailable = whenUnavailable
        leaseTime = sharedState.options.tokenLease
    }

    /// The token kept under `name` while it is not due; `nil` otherwise, or when the store does
    /// not answer in time.
    public func token(named name: String, deadline: ContinuousClock.Instant) async -> SharedToken? {
        await kept(SharedStateKeys.name(name), deadline: deadline) ?? nil
    }

    /// The token kept in row `row` while it is not due (`.some(nil)` for none); `nil` when the
    /// store does not answer in time.
    private func kept(_ row: String, deadline: ContinuousClock.Instant) async -> SharedToken?? {
        let keys = self.keys
        return await store.run("token", deadline: deadline) { client -> SharedToken? in
            try await Self.read(row, keys: keys, on: { try await client.query($0) })
        }
    }

    /// A token got under the fleet's lease on `name`.
    public func withLease(
        named name: String,
        refusing refused: String?,
        deadline: ContinuousClock.Instant,
        fetch: @escaping @Sendable () async throws -> SharedToken
    ) async throws -> SharedToken {
        let row = SharedStateKeys.name(name)
        let keys = self.keys
        let logger = store.logger
        // A token the server gave is used even when the store fails to keep it: never asked twice.
        let fetched = Locked<SharedToken?>(nil)
        let started = ContinuousClock.now
        // Another instance's lease is waited for until the call's deadline, or the lease time
        // when that comes first (then only is PostgreSQL's lock_timeout the lease's).
        let leaseEnds = started + Swift.max(leaseTime, .milliseconds(1))
        let waitUntil = Swift.min(deadline, leaseEnds)
        let outcome: Leased
        do {
            guard store.isAvailable else { throw PostgresSharedStateError("the shared state is unavailable") }
            // Connecting is bounded by the store's own time; waiting for the lease by the call's.
            let connectBy = Swift.min(deadline, .now + store.statementTimeout)
            try await store.prepared(until: connectBy)
            let client = store.client
            let connected = Outcome<Void>()
            let lockWaitEnds = Outcome<ContinuousClock.Instant>()
            let leaseHad = Outcome<Void>()
            let settled = Outcome<Leased>()
            let grace = Locked<Task<Void, Never>?>(nil)
            let keepFor = store.statementTimeout
            let work = Task {
                do {
                    let leased = try await client.withTransaction(logger: logger) { connection in
                        connected.settle(.success(()))
                        return try await Self.leased(
                            row, refusing: refused, deadline: deadline, leaseBy: waitUntil, keys: keys, on: connection, logger: logger,
                            onLockWait: { lockWaitEnds.settle(.success($0)) }, onLease: { leaseHad.settle(.success(())) }
                        ) {
                            // A wait the caller gave up on asks nothing: the caller went on without it.
                            try Task.checkCancellation()
                            let token = try await fetch()
                            fetched.withLock { $0 = token }
                            // The token is the caller's once the store has had its time to keep
                            // it: a connection lost with the lease does not hold the call.
                            let until = ContinuousClock.now + keepFor
                            grace.withLock {
                                $0 = Task {
                                    guard (try? await Task.sleep(until: until)) != nil else { return }
                                    settled.settle(.success(Leased(token: token, kept: false)))
                                }
                            }
                            return token
                        }
                    }
                    settled.settle(.success(leased))
                } catch {
                    connected.settle(.failure(error))
                    lockWaitEnds.settle(.failure(error))
                    leaseHad.settle(.failure(error))
                    settled.settle(.failure(error))
                }
                grace.withLock { $0?.cancel() }
            }
            do {
                try await connected.value(deadline: connectBy)
                // The two statements before the lease take the store's own time; the server ends the
                // wait for the lease at the lease time (lock_timeout). A store that does not say so
                // within its own time after that hangs, or another holder took the lease in turn:
                // the wait is over either way.
                let lockEnds = try await lockWaitEnds.value(deadline: Swift.min(deadline, .now + store.statementTimeout * 2))
                do {
                    try await leaseHad.value(deadline: Swift.min(deadline, lockEnds + store.statementTimeout))
                } catch let error as APIError where error.kind == .timeout {
                    throw LeaseWaitOverran()
                }
                outcome = try await settled.value(deadline: deadline)
            } catch {
                work.cancel()
                throw error
            }
        } catch {
            // The transaction wraps what its body threw: the token server's own error goes out
            // as it came.
            let inner = (error as? PostgresTransactionError)?.closureError ?? error
            if let failure = inner as? FetchFailed { throw failure.error }
            if Task.isCancelled { throw CancellationError() }
            // A token the server gave is used even when the store fails to keep it.
            if let token = fetched.value {
                store.noteFailure("token lease", error)
                return token
            }
            // Another instance held the lease past the lease time (not the call's deadline): it
            // is not let hold this call longer; the store itself answered.
            let now = ContinuousClock.now
            if Self.sqlState(inner) == "55P03" || inner is LeaseWaitOverran, leaseEnds < deadline, now >= leaseEnds, now < deadline {
                return try await overstayedLease(row: row, refusing: refused, deadline: deadline, fetch: fetch)
            }
            // Waiting out another instance's lease (lock_timeout, the call's deadline) says
            // nothing of the store: the lease was not had in time.
            if Self.leaseNotHadInTime(inner) || ContinuousClock.now >= deadline {
                throw PostgresSharedStateError("the token's lease, or the token request under it, took until the call's deadline")
            }
            if !(error is PostgresSharedStateError) { store.noteFailure("token lease", error) }
            guard whenUnavailable == .askAlone else {
                throw PostgresSharedStateError(
                    "no token could be had under the fleet's lease: the shared state did not answer (\(PostgresStore.reason(error)))")
            }
            return try await fetch()
        }
        guard outcome.kept else {
            store.noteFailure("token lease", PostgresSharedStateError("the token got under the lease was not kept in time"))
            return outcome.token
        }
        store.noteSuccess(startedAt: started)
        return outcome.token
    }

    /// A call that waited ``leaseTime`` for another instance's lease: takes the token kept
    /// meanwhile (the holder may have kept one as the wait ended), else asks alone, or fails, as
    /// ``WhenUnavailable`` says; said once a minute at most.
    private func overstayedLease(
        row: String, refusing refused: String?, deadline: ContinuousClock.Instant, fetch: @Sendable () async throws -> SharedToken
    ) async throws -> SharedToken {
        let kept = await kept(row, deadline: deadline)
        if let token = kept ?? nil, token.header != refused { return token }
        // The store itself did not answer (it hangs): as when it is unavailable.
        guard kept != nil else {
            guard whenUnavailable == .askAlone else {
                throw PostgresSharedStateError("no token could be had under the fleet's lease: the shared state did not answer")
            }
            return try await fetch()
        }
        let now = ContinuousClock.now
        let says = overstayed.withLock { last in
            guard last.map({ now - $0 >= .seconds(60) }) ?? true else { return false }
            last = now
            return true
        }
        let action = whenUnavailable == .askAlone ? "calls ask for their own tokens meanwhile" : "calls that need a new token fail meanwhile"
        if says {
            store.logger.warning(
                "Shared state: a token's lease was held past the lease time (\(RateLimitMiddleware.seconds(leaseTime))); \(action)",
                metadata: ["resourceful.shared-state": "postgres"])
        }
        guard whenUnavailable == .askAlone else {
            throw PostgresSharedStateError("another instance held the token's lease past the lease time (\(RateLimitMiddleware.seconds(leaseTime)))")
        }
        return try await fetch()
    }

    /// Whether `error` is PostgreSQL giving up waiting for the lease (`lock_timeout`, or a
    /// statement cancelled).
    private static func leaseNotHadInTime(_ error: any Error) -> Bool {
        let state = sqlState(error)
        return state == "55P03" || state == "57014"
    }

    /// The SQLSTATE of a PostgreSQL error.
    private static func sqlState(_ error: any Error) -> String? {
        (error as? PSQLError)?.serverInfo?[.sqlState]
    }

    /// The wait for the lease outlasted the server's own end of it by the store's time.
    private struct LeaseWaitOverran: Error {}

    /// What the lease's transaction came to.
    private struct Leased: Sendable {
        var token: SharedToken
        /// Whether the store kept it for the others.
        var kept = true
    }

    /// An error `fetch` threw, carried through the transaction unchanged.
    private struct FetchFailed: Error {
        var error: any Error
    }

    /// In the lease's transaction: waits for the lease within the deadline, reads again, fetches
    /// when still needed and keeps the new token.
    private static func leased(
        _ row: String, refusing refused: String?, deadline: ContinuousClock.Instant, leaseBy: ContinuousClock.Instant,
        keys: SharedStateKeys, on connection: PostgresConnection, logger: Logger,
        onLockWait: (ContinuousClock.Instant) -> Void, onLease: () -> Void, fetch: @Sendable () async throws -> SharedToken
    ) async throws -> Leased {
        // Waiting for the row's lock, and seeing the holder's token once it is had, both take
        // READ COMMITTED, whatever the role's default.
        try await connection.query("SET TRANSACTION ISOLATION LEVEL READ COMMITTED", logger: logger)
        // In whole milliseconds, rounded up (the server's waits end no earlier than asked), within
        // what PostgreSQL takes for a time-out (a 32-bit count of milliseconds, room left to add).
        func milliseconds(until instant: ContinuousClock.Instant) -> Int64 {
            Int64(Swift.min(Swift.max(((instant - .now) / .milliseconds(1)).rounded(.up), 1), 2_000_000_000))
        }
        // A holder whose host vanishes (power, partition) is not seen by TCP for hours: the
        // server ends its session, and the lease with it, once it has idled past the deadline.
        let lockFor = milliseconds(until: leaseBy)
        try await connection.query(
            """
            SELECT pg_catalog.set_config('lock_timeout', \("\(lockFor)ms"), true),
                pg_catalog.set_config('statement_timeout', \("\(milliseconds(until: deadline))ms"), true),
                pg_catalog.set_config('idle_in_transaction_session_timeout', \("\(milliseconds(until: deadline) + 5000)ms"), true)
            """, logger: logger)
        onLockWait(.now + .milliseconds(lockFor))
        // The lease is the lock of a row only the fleet's role may write (not an advisory lock,
        // which any role that may connect could take and hold).
        try await connection.query(
            """
            INSERT INTO resourceful.leases AS l (name, taken_us) VALUES ('token ' || \(row), resourceful.now_us())
            ON CONFLICT (name) DO UPDATE SET taken_us = excluded.taken_us
            """, logger: logger)
        onLease()
        if let kept = try await read(row, keys: keys, on: { try await connection.query($0, logger: logger) }),
            kept.header != refused
        {
            return Leased(token: kept)
        }
        let token: SharedToken
        do {
            token = try await fetch()
        } catch {
            throw FetchFailed(error: error)
        }
        let sealed = try keys.seal(try JSONEncoder().encode(Stored(token)).map { $0 }, context: row)
        let renew = PostgresRateLimitState.microseconds(Swift.max(token.renewIn, .zero))
        try await connection.query(
            """
            INSERT INTO resourceful.tokens (name, key_id, sealed, renew_at_us, touched_us)
                VALUES (\(row), \(sealed.keyID), \(ByteBuffer(bytes: sealed.sealed)), resourceful.now_us() + \(renew), resourceful.now_us())
            ON CONFLICT (name) DO UPDATE SET key_id = excluded.key_id, sealed = excluded.sealed,
                renew_at_us = excluded.renew_at_us, touched_us = excluded.touched_us
            """, logger: logger)
        return Leased(token: token)
    }

    /// The token in row `row` while it is not due: `nil` when there is none, it is due, or it
    /// does not open (sealed under a key not given, or altered).
    private static func read(
        _ row: String, keys: SharedStateKeys, on query: (PostgresQuery) async throws -> PostgresRowSequence
    ) async throws -> SharedToken? {
        let rows = try await query(
            """
            SELECT key_id, sealed, (least(greatest(renew_at_us::numeric - resourceful.now_us(), -1), 86400000000))::bigint
            FROM resourceful.tokens WHERE name = \(row) AND pg_catalog.octet_length(sealed) <= \(SharedStateKeys.largestSealedSecret)
            """)
        for try await (keyID, sealed, left) in rows.decode((String, ByteBuffer, Int64).self) {
            guard left > 0, let plain = keys.open(Array(sealed.readableBytesView), keyID: keyID, context: row),
                let stored = try? JSONDecoder().decode(Stored.self, from: Data(plain))
            else { return nil }
            return SharedToken(header: stored.header, renewIn: .microseconds(left), expiresAt: stored.expiresAt, scope: stored.scope)
        }
        return nil
    }

    /// What a row seals: the token without its lifetime (kept in the clear column, on the
    /// server's clock).
    private struct Stored: Codable {
        var header: String
        var expiresAt: Date?
        var scope: String?

        init(_ token: SharedToken) {
            header = token.header
            expiresAt = token.expiresAt
            scope = token.scope
        }
    }
}

/// The shared state could not be used for something that must not be done without it (a token
/// the fleet asks for once). Its description names what failed, never a value.
public struct PostgresSharedStateError: Error, Sendable, CustomStringConvertible {
    /// What failed.
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
