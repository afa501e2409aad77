public import Logging

/// Makes a fleet's shared state from the configuration: the kind `sharedState.kind` names,
/// with its keys under `sharedState.<kind>`.
///
/// `ResourcefulPostgres` brings `postgres` (`PostgresSharedStateFactory`); a store of an app's
/// own (Redis, say) is one more factory:
///
/// ```swift
/// let deps = try await APIDependencies.live(environment: "production", sharedStateFactories: [PostgresSharedStateFactory()])
/// let api = API(dependencies: deps)   // its budgets and breakers are the fleet's
/// ```
public protocol SharedStateFactory: Sendable {
    /// The name `sharedState.kind` uses for this kind; its keys are under `sharedState.<kind>`.
    var kind: String { get }

    /// Makes the state, reading and checking its keys through `context.keys`.
    ///
    /// - Throws: ``APIError/Kind/invalidConfiguration`` naming a key at fault.
    func makeSharedState(_ context: SharedStateContext) async throws(APIError) -> SharedState
}

/// What a ``SharedStateFactory`` makes its state from.
public struct SharedStateContext: Sendable {
    /// The whole configuration.
    public let config: APIConfig
    /// The keys under `sharedState.<kind>`; keys of a configuration built in code are not set.
    public let keys: ConfigurationKeys
    /// The environment variables the storages read; the process environment when `nil`.
    public let environment: [String: String]?
    /// Where the state logs.
    public let logger: Logger
    let storages: [APIConfig.StorageKind: any AuthenticationStorageFactory]
    /// The API's transport, for a storage of secrets that makes requests, or a store reached over
    /// HTTP.
    public let transport: any HTTPTransport

    /// A context for a factory's own tests: `config`'s `sharedState.<kind>` keys, the storage
    /// kinds `file`, `environment` and `storages` for its secrets, and `transport`.
    public init(
        config: APIConfig,
        kind: String,
        environment: [String: String]? = nil,
        logger: Logger = Logger(label: "resourceful.shared-state"),
        storages: [any AuthenticationStorageFactory] = [],
        transport: any HTTPTransport
    ) {
        let keys = (config.sharedState.keys ?? ConfigurationKeys.empty(scope: "sharedState")).scoped(to: kind)
        var known: [APIConfig.StorageKind: any AuthenticationStorageFactory] = [:]
        for storage in [FileStorageFactory(), EnvironmentStorageFactory()] as [any AuthenticationStorageFactory] + storages {
            known[storage.kind] = storage
        }
        self.init(config: config, keys: keys, environment: environment, logger: logger, storages: known, transport: transport)
    }

    init(
        config: APIConfig,
        keys: ConfigurationKeys,
        environment: [String: String]?,
        logger: Logger,
        storages: [APIConfig.StorageKind: any AuthenticationStorageFactory],
        transport: any HTTPTransport
    ) {
        self.config = config
        self.keys = keys
        self.environment = environment
        self.logger = logger
        self.storages = storages
        self.transport = transport
    }

    /// The secrets kept by the storage kind `kind` (`file`, `environment`, `keyring`), read with
    /// that kind's own settings, for a password or a key the state needs.
    ///
    /// - Throws: ``APIError/Kind/invalidConfiguration`` naming `key` when no storage of that kind
    ///   is known here, or it keeps no secrets.
    public func secretStorage(_ kind: APIConfig.StorageKind, key: String) async throws(APIError) -> any SecretStorage {
        try await AuthenticationStorageContext.secretStorage(
            kind, key: key, keys: keys, config: config, environment: environment, logger: logger, transport: transport,
            factories: storages, sharedState: nil)
    }
}

extension APIConfig {
    /// Where the state the limit steps keep lives (the `sharedState` keys): each API's own in
    /// memory, or a store a fleet shares, made by the ``SharedStateFactory`` of ``kind``.
    public struct SharedStateSettings: Sendable, Equatable {
        /// The kind of store (`sharedState.kind`, such as `postgres`); `nil` for memory.
        public var kind: String?
        /// The `sharedState` keys as the configuration was read, where the factory reads its own
        /// (`sharedState.<kind>.*`); `nil` for settings made in code. Not compared by `==`.
        public var keys: ConfigurationKeys?

        /// State in memory, unless `kind` names a store.
        public init(kind: String? = nil) {
            self.kind = kind
            self.keys = nil
        }

        /// The settings under `keys` (`sharedState`): `kind`, checked.
        ///
        /// - Throws: ``APIError/Kind/invalidConfiguration`` naming the key at fault.
        public init(keys: ConfigurationKeys) throws(APIError) {
            self.init()
            if let kind = try keys.string("kind"), !kind.isEmpty {
                guard StorageKind.isValidName(kind) else { throw keys.invalid("kind", expected: "a kind's name: letters, digits, - and _") }
                self.kind = kind
            }
            self.keys = keys
        }

        /// Whether the settings are the same, the keys they were read from aside.
        public static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.kind == rhs.kind
        }

        /// The state these settings describe: `nil` (memory) when no kind is named.
        ///
        /// - Throws: ``APIError/Kind/invalidConfiguration`` when the kind is not known here, or
        ///   its factory refuses its keys.
        package func makeSharedState(
            config: APIConfig,
            factories: [any SharedStateFactory],
            storages: [any AuthenticationStorageFactory],
            logger: Logger,
            environment: [String: String]?,
            transport: any HTTPTransport
        ) async throws(APIError) -> SharedState? {
            guard let kind else { return nil }
            let keys = self.keys ?? ConfigurationKeys.empty(scope: "sharedState")
            guard let factory = factories.first(where: { $0.kind == kind }) else {
                let known = factories.map(\.kind).sorted().joined(separator: ", ")
                let hint =
                    kind == "postgres"
                    ? "needs ResourcefulPostgres: pass PostgresSharedStateFactory() to the live dependencies"
                    : "pass its SharedStateFactory to the live dependencies"
                throw keys.invalid("kind", expected: "a kind known to this program\(known.isEmpty ? "" : ": \(known)") (\(kind) \(hint))")
            }
            let context = SharedStateContext(
                config: config, kind: kind, environment: environment, logger: logger, storages: storages, transport: transport)
            return try await factory.makeSharedState(context)
        }
    }
}
