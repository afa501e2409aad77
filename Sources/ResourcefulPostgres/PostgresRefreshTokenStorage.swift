import Foundation
import PostgresNIO
public import Resourceful

/// OAuth 2 refresh tokens a fleet shares through PostgreSQL, sealed, each rotation written with a
/// compare-and-set on the row's version: an `OAuth2AuthenticationStorage` given these and a
/// ``PostgresTokenCache`` renews under the fleet's lease, so that no two instances spend one
/// refresh token (an authorization server that detects reuse, as RFC 9700 asks, would revoke the
/// grant), and writes the rotated token only over the one it spent.
///
/// Rows are named by a digest of the secret's name and sealed with ``SharedStateKeys``, bound to
/// their row. A read the store cannot answer fails (``PostgresSharedStateError``) rather than
/// say "none is stored", which would send the person to log in again.
public final class PostgresRefreshTokenStorage: RotatingSecretStorage {
    private let store: PostgresStore
    private let keys: SharedStateKeys

    /// A row as read: its secret, version and sealed bytes.
    private struct Row: Sendable {
        var secret: String
        var version: Int64
        var sealed: [UInt8]
    }

    /// The row of each name this instance last read, so that a rotation of the token it read is
    /// one statement.
    private let lastRead = Locked([String: Row]())
    private static let maximumRead = 1_000

    /// This instance's running claims: the mark written in each row, and the version it was on.
    private let claims = Locked([String: Claim]())

    private struct Claim: Sendable {
        var id: String
        var version: Int64
        /// The secret being spent: a claim is ended only by the caller spending that one (another
        /// storage in the process may have claimed its successor meanwhile).
        var secret: String
        /// What holds the shared state's shutdown until the rotation is written
        /// (``LastingWrites/hold(until:)``).
        var hold: Int?
    }

    /// The mark of a claim whose answer was lost (the statement may have committed after this
    /// instance stopped waiting), by name: the next claim of that name, once none is under way,
    /// writes the same mark, so that the row is this instance's again rather than a stranger's
    /// the fleet waits out. Every other claim writes a mark of its own.
    private let unanswered = Locked([String: (id: String, underWay: Bool)]())

    /// Refresh tokens kept through `sharedState`'s connections, sealed with `keys`.
    public init(sharedState: PostgresSharedState, keys: SharedStateKeys) {
        store = sharedState.store
        self.keys = keys
    }

    /// The refresh token stored under `name`; `nil` when there is none, or its row does not open
    /// (sealed under a key not given, or altered).
    public func secret(named name: String) async throws -> String? {
        try await read(name)?.secret
    }

    /// Keeps `secret` under `name` (a login's refresh token), replacing any; tried again for a
    /// while when the store does not answer, as a login is not to be lost.
    public func storeSecret(_ secret: String, named name: String) async throws {
        let row = Self.row(name)
        let sealed = try keys.seal(Array(secret.utf8), context: row)
        _ = try await persisted("refresh token store") { client in
            try await client.query(
                """
                INSERT INTO resourceful.refresh_tokens AS t (name, version, key_id, sealed, touched_us)
                    VALUES (\(row), 1, \(sealed.keyID), \(ByteBuffer(bytes: sealed.sealed)), resourceful.now_us())
                ON CONFLICT (name) DO UPDATE SET version = t.version + 1, key_id = excluded.key_id, sealed = excluded.sealed,
                    touched_us = excluded.touched_us, claim_id = '', claimed_until_us = 0
                """)
            return true
        }
    }

    /// Forgets the refresh token under `name` (a logout); whether there was one.
    @discardableResult
    public func deleteSecret(named name: String) async throws -> Bool {
        let row = Self.row(name)
        return try await answered("refresh token delete") { client in
            for try await _ in try await client.query("DELETE FROM resourceful.refresh_tokens WHERE name = \(row) RETURNING 1") {
                return true
            }
            return false
        }
    }

    /// Replaces the refresh token under `name` with `new` if it is still `spent`: written only
    /// over the row read (its version and sealed bytes), so that of two writers only the first
    /// succeeds, and a login made after a logout is never written over with the old grant's
    /// token. The write is tried again for a while when the store does not answer, whatever the
    /// call's deadline: the token spent is gone, and its successor must not be lost.
    public func replaceSecret(named name: String, spent: String, with new: String) async throws -> Bool {
        let known = lastRead.withLock { $0[name] }
        guard let current = known?.secret == spent ? known : try await read(name), current.secret == spent else { return false }
        let row = Self.row(name)
        let sealed = try keys.seal(Array(new.utf8), context: row)
        let replaced = try await persisted("refresh token rotation") { client in
            let rows = try await client.query(
                """
                UPDATE resourceful.refresh_tokens SET version = version + 1, key_id = \(sealed.keyID),
                    sealed = \(ByteBuffer(bytes: sealed.sealed)), touched_us = resourceful.now_us(), claim_id = '', claimed_until_us = 0
                WHERE name = \(row) AND version = \(current.version) AND sealed = \(ByteBuffer(bytes: current.sealed))
                RETURNING 1
                """)
            for try await _ in rows { return true }
            return false
        }
        lastRead.withLock { $0[name] = replaced ? Row(secret: new, version: current.version + 1, sealed: sealed.sealed) : nil }
        // The rotation is written (or lost to another): shutdown need not wait for it any more.
        let hold = claims.withLock { claims -> Int? in
            guard claims[name]?.secret == spent else { return nil }
            defer {
                if replaced { claims[name] = nil } else { claims[name]?.hold = nil }
            }
            return claims[name]?.hold
        }
        if let hold { store.lastingWrites.end(hold) }
        return replaced
    }

    /// Marks `secret` under `name` as spent by this instance until `deadline` and the time a
    /// rotation's write may be tried for after it (four statement times, at least 30 s): in the
    /// row, so that another instance (even one that took the fleet's lease after this one lost
    /// it) does not spend the same token meanwhile. A claim on a row whose mark ran out replaces
    /// it; the mark ends with the rotation written over it. Once the shared state is ending
    /// (``PostgresSharedState/finishWrites()``), nothing is claimed: it throws.
    public func claimSecret(named name: String, spending secret: String, until deadline: ContinuousClock.Instant) async throws -> SecretClaim {
        // The store is ending: a token spent now could have its successor lost with the
        // connections. The renewal fails before it spends anything.
        guard !store.lastingWrites.isClosing else {
            throw PostgresSharedStateError("the shared state is shutting down: no refresh token is spent now")
        }
        let known = lastRead.withLock { $0[name] }
        guard let current = known?.secret == secret ? known : try await read(name), current.secret == secret else { return .replaced }
        let row = Self.row(name)
        let id = unanswered.withLock { unanswered -> String in
            if let lost = unanswered[name], !lost.underWay {
                unanswered[name]?.underWay = true
                return lost.id
            }
            if unanswered[name] != nil { return UUID().uuidString }
            if unanswered.count >= Self.maximumRead { unanswered.removeAll() }
            let id = UUID().uuidString
            unanswered[name] = (id, true)
            return id
        }
        // Past the last attempt of a rotation's write, which starts by the deadline and may run
        // one statement time past its window.
        let lasts = Swift.min(
            PostgresRateLimitState.microseconds(Swift.max(deadline - .now, .zero) + writeWindow + store.statementTimeout + .seconds(5)),
            Self.longestClaim)
        let answer: Bool
        do {
            answer = try await answered("refresh token claim") { client in
                let rows = try await client.query(
                    """
                    UPDATE resourceful.refresh_tokens SET claim_id = \(id), claimed_until_us = resourceful.now_us() + \(lasts)
                    WHERE name = \(row) AND version = \(current.version) AND sealed = \(ByteBuffer(bytes: current.sealed))
                        AND (claim_id = \(id) OR claimed_until_us <= resourceful.now_us()
                            OR claimed_until_us > resourceful.now_us() + \(Self.longestClaim))
                    RETURNING 1
                    """)
                for try await _ in rows { return true }
                return false
            }
        } catch {
            // No answer: the mark may be in the row; the next claim of the name writes it again.
            unanswered.withLock { if $0[name]?.id == id { $0[name]?.underWay = false } }
            throw error
        }
        unanswered.withLock { if $0[name]?.id == id { $0[name] = nil } }
        if answer {
            // A shutdown waits for the rotation this claim is for while its token request may
            // still be answered: until the call's deadline. One that began meanwhile refuses it:
            // nothing is spent, and the mark is taken back.
            guard let hold = store.lastingWrites.hold(until: deadline + store.statementTimeout) else {
                await unmark(row, version: current.version, id: id)
                throw PostgresSharedStateError("the shared state is shutting down: no refresh token is spent now")
            }
            // Bounded: many names at once only forget the claims (their marks run out), and end
            // what they held.
            let dropped = claims.withLock { claims -> [Claim] in
                var dropped = claims.count >= Self.maximumRead ? Array(claims.values) : claims[name].map { [$0] } ?? []
                if claims.count >= Self.maximumRead { claims.removeAll() }
                claims[name] = Claim(id: id, version: current.version, secret: secret, hold: hold)
                dropped.removeAll { $0.hold == hold }
                return dropped
            }
            for claim in dropped { if let earlier = claim.hold { store.lastingWrites.end(earlier) } }
            return .claimed
        }
        // Not claimed: another's mark is running, or the row changed since it was read.
        return try await read(name)?.secret == secret ? .heldElsewhere : .replaced
    }

    /// Ends this instance's claim on `secret` under `name`, when it still holds one (none is left
    /// after a rotation was written over it); a store that does not answer leaves the mark to
    /// run out.
    public func releaseClaim(named name: String, spending secret: String) async {
        guard let claim = claims.withLock({ claims in claims[name]?.secret == secret ? claims.removeValue(forKey: name) : nil }) else { return }
        if let hold = claim.hold { store.lastingWrites.end(hold) }
        await unmark(Self.row(name), version: claim.version, id: claim.id)
    }

    /// Takes this instance's mark `id` off the row, when it is still there; a store that does not
    /// answer leaves it to run out.
    private func unmark(_ row: String, version: Int64, id: String) async {
        _ = await store.answer("refresh token claim release") { client in
            let rows = try await client.query(
                """
                UPDATE resourceful.refresh_tokens SET claim_id = '', claimed_until_us = 0
                WHERE name = \(row) AND version = \(version) AND claim_id = \(id)
                RETURNING 1
                """)
            for try await _ in rows {}
            return true
        }
    }

    /// Nothing waits for the successor of `secret` under `name` any more: its request ended
    /// without one. The claim in the row runs out (the secret may have been spent).
    public func abandonClaim(named name: String, spending secret: String) async {
        let hold = claims.withLock { claims -> Int? in
            guard claims[name]?.secret == secret else { return nil }
            defer { claims[name]?.hold = nil }
            return claims[name]?.hold
        }
        if let hold { store.lastingWrites.end(hold) }
    }

    /// The longest claim written, in microseconds (an hour): a row claimed for longer was not
    /// claimed by an instance of this module, and is taken over.
    private static let longestClaim: Int64 = 3_600_000_000

    /// How long a rotation's write is tried for after its request (``persisted(_:_:)``): four
    /// statement times, and at least 30 s, which a database's failover usually takes.
    var writeWindow: Duration {
        Swift.max(store.statementTimeout * 4, .seconds(30))
    }

    /// The row of `name`.
    private func read(_ name: String) async throws -> Row? {
        let row = Self.row(name)
        let keys = self.keys
        let found = try await answered("refresh token read") { client -> Row? in
            // A row larger than any token sealed is read as holding none, without its bytes.
            let rows = try await client.query(
                """
                SELECT version, key_id, CASE WHEN pg_catalog.octet_length(sealed) <= \(SharedStateKeys.largestSealedSecret) THEN sealed ELSE ''::bytea END
                FROM resourceful.refresh_tokens WHERE name = \(row)
                """)
            for try await (version, keyID, sealed) in rows.decode((Int64, String, ByteBuffer).self) {
                let bytes = Array(sealed.readableBytesView)
                guard let plain = keys.open(bytes, keyID: keyID, context: row), let secret = String(bytes: plain, encoding: .utf8) else {
                    return nil
                }
                return Row(secret: secret, version: version, sealed: bytes)
            }
            return nil
        }
        lastRead.withLock { read in
            if read.count >= Self.maximumRead { read.removeAll() }
            read[name] = found
        }
        return found
    }

    /// What `body` answered, written past the store's pause after a failure and past the call's
    /// deadline, tried again until it answers or a while (four statement times, at least 30 s)
    /// has passed; ``PostgresSharedStateError`` then.
    ///
    /// The write runs in a task of its own, which the caller's cancellation (a call's deadline
    /// passing while its lease was held) does not reach: the token spent is gone either way. The
    /// shared state's shutdown waits for it (``PostgresSharedState/finishWrites()``).
    func persisted<T: Sendable>(_ what: String, _ body: @escaping @Sendable (PostgresClient) async throws -> T) async throws -> T {
        let until = ContinuousClock.now + writeWindow
        let store = self.store
        return try await store.lastingWrites.run {
            while true {
                let answer = await SharedState.$callDeadline.withValue(nil) {
                    await store.answer(what, evenWhenUnavailable: true) { client -> Result<T, PostgresSharedStateError> in
                        do {
                            return .success(try await body(client))
                        } catch where PostgresStore.isRefusedForItsValues(error) {
                            // Refused again if sent again: said at once, not tried for the window.
                            return .failure(PostgresSharedStateError("the refresh token could not be \(Self.verb(what)): PostgreSQL refused its values"))
                        }
                    }
                }
                if case .answered(let value) = answer { return try value.get() }
                guard ContinuousClock.now < until else {
                    if what == "refresh token rotation" {
                        // The token spent is gone at its server, and its successor with this
                        // write: said once, loudly, for the one who must log in again.
                        store.logger.error(
                            "A rotated refresh token could not be kept: the shared state did not answer in time; its grant ends when the spent token is used again",
                            metadata: ["resourceful.shared-state": "postgres"])
                    }
                    throw PostgresSharedStateError("the shared state is unavailable: the refresh token could not be \(Self.verb(what))")
                }
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// What `body` answered; ``PostgresSharedStateError`` when the store cannot answer in time.
    private func answered<T: Sendable>(_ what: String, _ body: @escaping @Sendable (PostgresClient) async throws -> T) async throws -> T {
        switch await store.answer(what, body) {
        case .answered(let value): return value
        case .unavailable, .cutShort: throw PostgresSharedStateError("the shared state is unavailable: the refresh token could not be \(Self.verb(what))")
        }
    }

    private static func verb(_ what: String) -> String {
        switch what {
        case "refresh token store": "stored"
        case "refresh token delete": "deleted"
        case "refresh token rotation": "rotated"
        case "refresh token claim": "claimed"
        default: "read"
        }
    }

    /// A row's name: a digest of the secret's name, apart from the access tokens' rows.
    static func row(_ name: String) -> String {
        SharedStateKeys.name("refresh token \(name)")
    }
}
