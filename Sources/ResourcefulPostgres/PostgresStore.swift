import Foundation
import Logging
import PostgresNIO
import Resourceful

/// The connection to the shared state, used by every kind of state: each statement bounded in
/// time, the schema prepared before the first, and an unavailable store left alone for a while.
///
/// A statement that fails or does not answer in time makes the store unavailable for
/// ``retryInterval``: meanwhile every state serves from its in-memory fallback at once, without
/// waiting for the store, and the first statement after the interval tries it again. One warning
/// is logged when the store becomes unavailable and one notice when it answers again, never one
/// per call; neither holds a value of a row.
final class PostgresStore: Sendable {
    let client: PostgresClient
    let logger: Logger
    /// The longest a statement may take before the store counts as unavailable.
    let statementTimeout: Duration
    /// How long an unavailable store is left alone.
    let retryInterval: Duration
    /// Writes that outlive their calls, which shutdown waits for.
    let lastingWrites = LastingWrites()

    private struct Health: Sendable {
        var unavailableUntil: ContinuousClock.Instant?
        var warned = false
        var prepared = false
        var preparing: Task<Void, any Error>?
        /// A table or function was missing although the version was there (a partial restore):
        /// every step is applied again (each is idempotent).
        var remigrate = false
        var lastCleanup: ContinuousClock.Instant?
        /// A statement is trying the store after an outage.
        var probing = false
        /// When the last failure was noted: a statement begun before it says nothing of the
        /// store since.
        var failedAt: ContinuousClock.Instant?
        /// When an outage was last logged, and whether the current one was: a store that answers
        /// reads and refuses writes (read-only, a full disk) changes state every retry interval,
        /// and is said once a minute, not each time.
        var loggedAt: ContinuousClock.Instant?
        var outageLogged = false
    }

    private let health = Locked(Health())

    init(client: PostgresClient, logger: Logger, statementTimeout: Duration, retryInterval: Duration) {
        self.client = client
        self.logger = logger
        self.statementTimeout = statementTimeout
        self.retryInterval = retryInterval
    }

    /// Whether statements are sent now (the store answered last, or its pause is over).
    var isAvailable: Bool {
        health.withLock { ($0.unavailableUntil ?? .now) <= .now }
    }

    /// What a statement came to.
    enum Answer<T: Sendable>: Sendable {
        /// The store answered.
        case answered(T)
        /// The store is unavailable, failed, or did not answer within its own time: the caller
        /// serves from memory.
        case unavailable
        /// The caller's deadline came before the store's answer: nothing is known of the store,
        /// nor of what it would have said.
        case cutShort
    }

    /// Runs `body` against the store within `statementTimeout` (and before `deadline`, when
    /// sooner): its result, or `nil` when the store is unavailable, fails, does not answer in
    /// time, or the caller's deadline comes first — the caller then serves from memory.
    func run<T: Sendable>(
        _ what: String,
        deadline: ContinuousClock.Instant? = nil,
        _ body: @escaping @Sendable (PostgresClient) async throws -> T
    ) async -> T? {
        guard case .answered(let value) = await answer(what, deadline: deadline, body) else { return nil }
        return value
    }

    /// Runs `body` against the store within `statementTimeout` (and before `deadline`, when
    /// sooner; by default the deadline of the call the state works for,
    /// ``SharedState/callDeadline``). Only a failure or the store's own time-out makes the store
    /// unavailable; a caller's deadline that comes first, or its cancellation, does not.
    ///
    /// The store is judged by its own time alone: a statement whose caller stops waiting first
    /// runs on in the background until it answers or its own time is up, so that a store that
    /// does not answer is found unavailable even when every call's deadline is shorter than
    /// `statementTimeout`, and those calls then serve from memory.
    ///
    /// After an outage one statement at a time tries the store (the others serve from memory
    /// meanwhile), unless `evenWhenUnavailable` (a write that must not be lost), which is sent
    /// whatever the store's health.
    func answer<T: Sendable>(
        _ what: String,
        deadline: ContinuousClock.Instant? = nil,
        evenWhenUnavailable: Bool = false,
        _ body: @escaping @Sendable (PostgresClient) async throws -> T
    ) async -> Answer<T> {
        let now = ContinuousClock.now
        let probing: Bool? = evenWhenUnavailable ? false : health.withLock { health in
            guard let until = health.unavailableUntil else { return false }
            guard until <= now, !health.probing else { return nil }
            health.probing = true
            return true
        }
        guard let probing else { return .unavailable }
        defer { if probing { health.withLock { $0.probing = false } } }
        let own = now + statementTimeout
        let client = self.client
        let statement = { @Sendable [self] () async throws -> T in
            do {
                try await prepared(until: own)
                let result = try await Deadline.run(until: own) { try await body(client) }
                noteSuccess(startedAt: now)
                cleanUpNowAndThen()
                return result
            } catch {
                // A caller cancelled (its call ended) says nothing of the store.
                if !Task.isCancelled { noteFailure(what, error) }
                throw error
            }
        }
        guard let callerDeadline = deadline ?? SharedState.callDeadline, callerDeadline < own else {
            do {
                return .answered(try await statement())
            } catch {
                return Task.isCancelled ? .cutShort : .unavailable
            }
        }
        guard callerDeadline > now else { return .cutShort }
        let outcome = Outcome<T>()
        Task {
            do {
                outcome.settle(.success(try await statement()))
            } catch {
                outcome.settle(.failure(error))
            }
        }
        do {
            return .answered(try await outcome.value(deadline: callerDeadline))
        } catch {
            if Task.isCancelled || ContinuousClock.now >= callerDeadline { return .cutShort }
            return .unavailable
        }
    }

    /// PostgreSQL's codes for a function, table or schema that does not exist.
    static let schemaMissing: Set<String> = ["42883", "42P01", "3F000"]

    /// Creates or migrates the schema once per instance, before the first statement. A migration
    /// that failed is made again by the next statement; one still running is awaited.
    func prepared(until deadline: ContinuousClock.Instant) async throws {
        let task: Task<Void, any Error>? = health.withLock { state in
            if state.prepared { return nil }
            if let running = state.preparing { return running }
            let client = self.client
            let logger = self.logger
            let health = self.health
            let everyStep = state.remigrate
            let running = Task {
                do {
                    // A migration that hangs (a lock another session holds, a partition) ends,
                    // so that the next statement tries again.
                    try await Deadline.run(until: .now + .seconds(30)) {
                        try await PostgresStore.migrate(client, logger: logger, everyStep: everyStep)
                    }
                    health.withLock {
                        $0.prepared = true
                        $0.remigrate = false
                        $0.preparing = nil
                    }
                } catch {
                    health.withLock { $0.preparing = nil }
                    throw error
                }
            }
            state.preparing = running
            return running
        }
        guard let task else { return }
        try await Deadline.run(until: deadline) { try await task.value }
    }

    /// Applies every step of the schema the database lacks, in one transaction holding the
    /// migration lock, once the schema is found to hold nothing of a role the instances do not
    /// trust (``PostgresSchema/untrustedObject``).
    static func migrate(_ client: PostgresClient, logger: Logger, everyStep: Bool = false) async throws {
        let settings: PostgresQuery = """
            SELECT pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true),
                pg_catalog.set_config('lock_timeout', '20s', true), pg_catalog.set_config('statement_timeout', '25s', true)
            """
        do {
            // A schema at its version is only read, in a transaction of its own: the lock (which
            // any role that may connect could hold) is taken only to change it, and no lock this
            // read took is held while the lock is waited for.
            if !everyStep {
                let current = try await client.withTransaction(logger: logger) { connection -> Bool in
                    try await connection.query(settings, logger: logger)
                    try await refuseUntrusted(connection, logger: logger)
                    return try await version(connection, logger: logger).version >= PostgresSchema.version
                }
                if current { return }
            }
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query(settings, logger: logger)
                try await connection.query("SELECT pg_advisory_xact_lock(\(PostgresSchema.migrationLock))", logger: logger)
                try await refuseUntrusted(connection, logger: logger)
                let (schemaExists, found) = try await version(connection, logger: logger)
                guard found < PostgresSchema.version || everyStep else { return }
                // Made here, not found: another role's schema made since the check above fails
                // this migration (the next one refuses it) instead of receiving the tables.
                if !schemaExists { try await connection.query("CREATE SCHEMA resourceful", logger: logger) }
                for step in PostgresSchema.steps {
                    try await connection.query(PostgresQuery(unsafeSQL: step), logger: logger)
                }
                // And what the migration made or found is checked again before it is committed.
                try await refuseUntrusted(connection, logger: logger)
                try await connection.query("DELETE FROM resourceful.version", logger: logger)
                try await connection.query("INSERT INTO resourceful.version (version) VALUES (\(PostgresSchema.version))", logger: logger)
            }
        } catch let error as PostgresTransactionError {
            if let refused = error.closureError as? PostgresSharedStateError { throw refused }
            throw error
        }
    }

    /// Whether the schema exists, and the version it is at (0 for none).
    private static func version(_ connection: PostgresConnection, logger: Logger) async throws -> (schemaExists: Bool, version: Int) {
        var schemaExists = false
        for try await count in try await connection.query(
            "SELECT count(*)::int4 FROM pg_namespace WHERE nspname = 'resourceful'", logger: logger
        ).decode(Int32.self) {
            schemaExists = count > 0
        }
        var exists = false
        for try await table in try await connection.query("SELECT to_regclass('resourceful.version')::text", logger: logger)
            .decode(String?.self)
        {
            exists = table != nil
        }
        var found = 0
        if exists {
            for try await version in try await connection.query("SELECT max(version) FROM resourceful.version", logger: logger)
                .decode(Int?.self)
            {
                found = version ?? 0
            }
        }
        return (schemaExists, found)
    }

    /// Throws ``PostgresSharedStateError`` when the schema holds what would run another role's
    /// code (``PostgresSchema/untrustedObject``).
    private static func refuseUntrusted(_ connection: PostgresConnection, logger: Logger) async throws {
        for try await found in try await connection.query(PostgresQuery(unsafeSQL: PostgresSchema.untrustedObject), logger: logger)
            .decode(String.self)
        {
            throw PostgresSharedStateError(
                "the schema resourceful is not used: it holds \(found), and only the instances' role (or a role it is a member of), a superuser or the database's owner may own or change what is in it"
            )
        }
    }

    /// Makes the store unavailable for a while after `what` failed; warns once per outage. A
    /// table, function or schema found missing (a database restored or made again) is created
    /// again by the next statement.
    func noteFailure(_ what: String, _ error: any Error) {
        let code = Self.sqlState(error)
        // A statement refused for its own values says nothing of the store: the others go on
        // using it.
        if Self.isRefusedForItsValues(error) {
            logger.debug(
                "Shared state statement refused for its values",
                metadata: ["resourceful.operation": .string(what), "resourceful.reason": .string(Self.reason(error))])
            return
        }
        if let state = code, Self.schemaMissing.contains(state) {
            health.withLock {
                $0.prepared = false
                $0.remigrate = true
            }
        }
        let first: Bool = health.withLock { state in
            let now = ContinuousClock.now
            state.unavailableUntil = now + retryInterval
            state.failedAt = now
            // An outage not said yet (another was said less than a minute before) is said once
            // that minute is over, if it lasts.
            guard !state.outageLogged else { return false }
            let due = state.loggedAt.map { now - $0 >= .seconds(60) } ?? true
            state.warned = true
            guard due else { return false }
            state.outageLogged = true
            state.loggedAt = now
            return true
        }
        guard first else { return }
        logger.warning(
            "Shared state unavailable: each instance keeps its own in memory until it answers",
            metadata: [
                "resourceful.shared-state": "postgres",
                "resourceful.operation": .string(what),
                "resourceful.reason": .string(Self.reason(error)),
            ]
        )
    }

    /// PostgreSQL's code for `error`, when the server sent one.
    static func sqlState(_ error: any Error) -> String? {
        let inner = (error as? PostgresTransactionError)?.closureError ?? error
        return (inner as? PSQLError)?.serverInfo?[.sqlState]
    }

    /// Whether the server refused a statement for its own values (a data exception, class 22, or
    /// a value past a limit of the server's, class 54): sending it again is refused again.
    static func isRefusedForItsValues(_ error: any Error) -> Bool {
        guard let code = sqlState(error) else { return false }
        return code.hasPrefix("22") || code.hasPrefix("54")
    }

    /// Makes the store available again, unless a failure was noted after the statement that
    /// answered began (`startedAt`); says so once after an outage.
    func noteSuccess(startedAt: ContinuousClock.Instant = .now) {
        let wasDown: Bool = health.withLock { state in
            if let failedAt = state.failedAt, startedAt < failedAt { return false }
            defer {
                state.warned = false
                state.outageLogged = false
                state.unavailableUntil = nil
            }
            // Said only for an outage that was said.
            return state.warned && state.outageLogged
        }
        guard wasDown else { return }
        logger.notice("Shared state available again", metadata: ["resourceful.shared-state": "postgres"])
    }

    /// What went wrong, without the statement's values: PostgreSQL's own code and message for a
    /// server error, the kind of failure otherwise.
    static func reason(_ error: any Error) -> String {
        if let error = error as? PostgresTransactionError {
            let part = error.beginError ?? error.closureError ?? error.commitError ?? error.rollbackError
            return part.map(reason) ?? "the transaction failed"
        }
        if let error = error as? PSQLError {
            if let code = error.serverInfo?[.sqlState] {
                return "PostgreSQL error \(code): \(error.serverInfo?[.message] ?? "")"
            }
            return "PostgreSQL client error \(error.code.description)"
        }
        if let error = error as? APIError { return error.kind == .timeout ? "no answer in time" : "\(error.kind)" }
        if let error = error as? PostgresSharedStateError { return error.description }
        return String(describing: type(of: error))
    }

    /// Deletes rows idle for long, about once a minute per instance, in the background: no job
    /// for the user to run.
    private func cleanUpNowAndThen() {
        let now = ContinuousClock.now
        let due: Bool = health.withLock { state in
            if let last = state.lastCleanup, now - last < .seconds(60) { return false }
            state.lastCleanup = now
            return true
        }
        guard due else { return }
        let client = self.client
        let logger = self.logger
        Task {
            _ = try? await Deadline.run(until: .now + .seconds(10)) {
                try await PostgresStore.cleanUp(client, logger: logger)
            }
        }
    }

    /// Rows no call has touched for ten minutes and that hold nothing still in force.
    static func cleanUp(_ client: PostgresClient, logger: Logger) async throws {
        let idle: Int64 = 600_000_000
        try await client.query(
            """
            DELETE FROM resourceful.rate_limits WHERE touched_us < resourceful.now_us() - \(idle)
                AND coalesce(arrival_us, 0) <= resourceful.now_us() AND coalesce(paused_until_us, 0) <= resourceful.now_us()
                AND coalesce(learned_until_us, 0) <= resourceful.now_us()
            """, logger: logger)
        try await client.query(
            """
            DELETE FROM resourceful.breakers WHERE touched_us < resourceful.now_us() - \(idle)
                AND open_until_us <= resourceful.now_us()
            """, logger: logger)
        // A token past its renewal is never read again, only replaced: one no instance replaced
        // for ten minutes is left behind (a scope or client no longer used). A row a lease holder
        // is replacing is locked, and skipped.
        try await client.query(
            """
            DELETE FROM resourceful.tokens WHERE name IN (
                SELECT name FROM resourceful.tokens WHERE renew_at_us < resourceful.now_us() - \(idle)
                    AND touched_us < resourceful.now_us() - \(idle) FOR UPDATE SKIP LOCKED)
            """, logger: logger)
        // A lease row no instance holds (a held one is locked, and skipped) and none took for ten
        // minutes: the next taker makes it again.
        try await client.query(
            """
            DELETE FROM resourceful.leases WHERE name IN (
                SELECT name FROM resourceful.leases WHERE taken_us < resourceful.now_us() - \(idle) FOR UPDATE SKIP LOCKED)
            """, logger: logger)
    }
}
