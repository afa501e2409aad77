public import Logging
public import PostgresNIO
public import Resourceful
public import ServiceLifecycle

/// State a fleet of instances shares through PostgreSQL: rate budgets and pauses
/// (``rateLimits``) and circuit breakers (``circuitBreakers``), in place of each instance's own.
///
/// ```swift
/// var connection = PostgresClient.Configuration(
///     host: "db.internal", username: "orders", password: password, database: "orders", tls: .require(.makeClientConfiguration()))
/// let shared = PostgresSharedState(configuration: connection, logger: logger)
/// let api = API(dependencies: dependencies, middlewares: API.defaultMiddlewares(sharedState: shared.state))
/// // Run the client's connections as long as the API is used: in a ServiceGroup, or
/// try await withThrowingDiscardingTaskGroup { group in
///     group.addTask { await shared.run() }
///     // … the app …
/// }
/// ```
///
/// The tables and functions are created by the first instance that needs them (or by
/// ``prepare()``), under a transaction-scoped advisory lock, so that instances starting at once
/// apply them once; `Schema.sql` holds the same statements for those who apply them themselves.
///
/// **When the store fails.** A statement that fails or takes longer than
/// ``Options/statementTimeout`` makes the store unavailable for ``Options/retryInterval``: meanwhile
/// each instance keeps its budgets and breakers in memory, with one warning logged, and returns to
/// the shared ones when the store answers again (one notice). A call never waits past its deadline
/// for the store, and fails because of it only where it is told to:
/// ``Options/budgetsWhenUnavailable`` for budgets, ``PostgresTokenCache/WhenUnavailable`` for
/// tokens.
///
/// **Round trips per call.** One for a call to an upstream with a budget or a pause known (its
/// place in the budget); none for a closed breaker read within the last
/// ``Options/breakerRefresh``.
public final class PostgresSharedState: Service, Sendable {
    /// How the shared state uses its store.
    public struct Options: Sendable {
        /// The longest one statement may take before the store counts as unavailable: 0.5 s.
        public var statementTimeout: Duration = .milliseconds(500)
        /// How long an unavailable store is left alone before it is tried again: 1 s.
        public var retryInterval: Duration = .seconds(1)
        /// How long an instance takes an upstream's breaker, as last read from the store, to hold:
        /// 0.25 s. An opening reaches every instance within it.
        public var breakerRefresh: Duration = .milliseconds(250)
        /// How long a half-open breaker's probe slots are held before they are taken back from
        /// instances that never said how their probe ended (killed ones): 30 s, a call's default
        /// time-out.
        public var probeLease: Duration = .seconds(30)
        /// How long an instance waits for another's lease on a token (``PostgresTokenCache``)
        /// before it stops waiting: 10 s, a third of a token request's default time-out. A holder
        /// that is killed loses its lease at once; one that lives on and holds it (hung, or not
        /// one of the fleet's own builds) holds the others this long (and the store's statement
        /// time when it hangs meanwhile). Then an instance takes a token kept meanwhile, or does
        /// what ``PostgresTokenCache/WhenUnavailable`` says (asks alone, or fails the call). A
        /// token endpoint slower than this makes the waiting instances ask too (with `askAlone`)
        /// or fail (with `fail`): raise it for one that is; at or above the calls' time-out, a
        /// lease is waited for to their deadline. Less than a millisecond counts as one.
        public var tokenLease: Duration = .seconds(10)
        /// What a call with a configured rate budget does while the store is unavailable:
        /// ``PostgresRateLimitState/WhenUnavailable/useMemory`` (the default: each instance keeps
        /// the budget alone) or ``PostgresRateLimitState/WhenUnavailable/fail``.
        public var budgetsWhenUnavailable: PostgresRateLimitState.WhenUnavailable = .useMemory

        /// The defaults above.
        public init() {}
    }

    /// The PostgreSQL client the state is kept through; ``run()`` runs it.
    public let client: PostgresClient
    /// Rate budgets and pauses shared by the fleet.
    public let rateLimits: PostgresRateLimitState
    /// Circuit breakers shared by the fleet.
    public let circuitBreakers: PostgresCircuitBreakerState
    /// How the state uses its store.
    public let options: Options
    let store: PostgresStore

    /// Shared state kept through a client of its own, connecting as `configuration` says; it logs
    /// the store's unavailability through `logger` (never a value of a row).
    ///
    /// Its sessions end a statement the server runs longer than twice ``Options/statementTimeout``
    /// (`statement_timeout`), or waits that long for a row another session locked (`lock_timeout`),
    /// so that a statement an instance stopped waiting for does not run on. Their `search_path` is
    /// `pg_catalog, pg_temp`: no function or operator another role created in a schema of the
    /// database's default path (`public`) is called in place of PostgreSQL's own.
    public convenience init(configuration: PostgresClient.Configuration, options: Options = Options(), logger: Logger) {
        var configuration = configuration
        let limit = Swift.max(Int64(options.statementTimeout * 2 / .milliseconds(1)), 1)
        configuration.options.additionalStartupParameters += [
            ("statement_timeout", "\(limit)"), ("lock_timeout", "\(limit)"), ("search_path", "pg_catalog, pg_temp"),
        ]
        // The client's own chatter (each connection made or closed) stays below notices; the
        // state says itself when the store becomes unavailable and when it is back.
        var background = logger
        background.logLevel = Swift.max(logger.logLevel, .notice)
        self.init(client: PostgresClient(configuration: configuration, backgroundLogger: background), options: options, logger: logger)
    }

    /// Shared state kept through `client`, which the app runs (``run()`` then need not be called).
    ///
    /// The state names its own tables and functions by their schema (`resourceful`), but its
    /// statements use PostgreSQL's operators and functions as the sessions' `search_path` finds
    /// them: give `client` a path whose schemas only trusted roles may create in (PostgreSQL's
    /// secure schema usage pattern), such as `pg_catalog, pg_temp` in
    /// `additionalStartupParameters`, as the other initializer does.
    public init(client: PostgresClient, options: Options = Options(), logger: Logger) {
        self.client = client
        self.options = options
        store = PostgresStore(client: client, logger: logger, statementTimeout: options.statementTimeout, retryInterval: options.retryInterval)
        rateLimits = PostgresRateLimitState(store: store, whenUnavailable: options.budgetsWhenUnavailable)
        circuitBreakers = PostgresCircuitBreakerState(store: store, refresh: options.breakerRefresh, probeLease: options.probeLease)
    }

    /// The states, for ``API/defaultMiddlewares(sharedState:)``.
    public var state: SharedState {
        SharedState(rateLimits: rateLimits, circuitBreakers: circuitBreakers)
    }

    /// Runs the client's connections until the task is cancelled or a `ServiceGroup` shuts down.
    ///
    /// A graceful shutdown ends them only once the writes still in flight have reached the store
    /// (``finishWrites()``): a rotated refresh token is written even when the app stops while its
    /// renewal is being answered. Cancellation ends them at once.
    public func run() async {
        let client = self.client
        let writes = store.lastingWrites
        // The connections run outside the caller's graceful shutdown (a detached task takes no
        // task-locals), so that they outlive it until the writes have ended.
        let connections = Task.detached { await client.run() }
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await connections.value
            } onGracefulShutdown: {
                // No refresh token is claimed from now on (a renewal begun now fails before it
                // spends one), so that a stream of new renewals does not hold the shutdown.
                writes.close()
                Task.detached {
                    await writes.finished()
                    connections.cancel()
                }
            }
        } onCancel: {
            connections.cancel()
        }
    }

    /// Returns once every write that outlives the call that asked for it (a rotated refresh
    /// token's, tried for four statement times and at least 30 s) has reached the store or given
    /// up, and every renewal that claimed a refresh token has ended (its successor written, or
    /// its request over: at the latest by its deadline). From the call on, no refresh token is
    /// claimed (a renewal begun now fails before it spends one), so that new renewals do not
    /// hold it. ``run()`` waits for it on a graceful shutdown, and the state's own shutdown
    /// (`SharedState.shutdown()`, made by the factory); an app that runs ``client`` itself calls
    /// it before it stops the client.
    public func finishWrites() async {
        store.lastingWrites.close()
        await store.lastingWrites.finished()
    }

    /// Creates or migrates the tables and functions now, rather than on first use; throws what
    /// PostgreSQL said when that fails. The client must be running.
    public func prepare() async throws {
        try await store.prepared(until: .now + .seconds(30))
    }

    /// Whether the store answered the last statement (or its time to be tried again has come).
    public var isAvailable: Bool { store.isAvailable }
}
