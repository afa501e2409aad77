import Foundation
public import Logging

/// The ready-made container of what an ``API`` depends on; every field can be changed.
///
/// ```swift
/// var deps = try await APIDependencies.live(environment: "development")
/// deps.authenticationStorage = InMemoryAuthenticationStorage(["example-api": "Bearer test"])
/// let api = API(dependencies: deps)
/// ```
///
/// An app with a container of its own can conform it to ``API/Dependencies`` instead.
public struct APIDependencies: API.Dependencies, HasSharedState {
    /// The configuration.
    public var apiConfig: APIConfig
    /// Where the `Authorization` header comes from.
    public var authenticationStorage: any AuthenticationStorage
    /// The transport.
    public var transport: any HTTPTransport
    /// Encodes JSON request bodies.
    public var requestEncoder: any RequestEncoder
    /// Decodes response bodies.
    public var responseDecoder: any ResponseDecoder
    /// The logger.
    public var logger: Logger
    /// The state a fleet shares (`sharedState.kind` in the configuration, made by a
    /// ``SharedStateFactory``): an ``API`` made from these dependencies keeps its rate budgets
    /// and breakers there, and its ``API/shutdown()`` ends the store's connections. `nil` keeps
    /// them in memory, per API.
    public var sharedState: SharedState?

    /// Creates a container; the coders default to JSON set up from `apiConfig.coding` (the response
    /// decoder is the one ``APIConfig/Coding/decoder`` chooses), the logger
    /// to one labelled `resourceful` at `apiConfig.logging.level`.
    public init(
        apiConfig: APIConfig,
        authenticationStorage: any AuthenticationStorage = InMemoryAuthenticationStorage(),
        transport: any HTTPTransport,
        requestEncoder: (any RequestEncoder)? = nil,
        responseDecoder: (any ResponseDecoder)? = nil,
        logger: Logger? = nil,
        sharedState: SharedState? = nil
    ) {
        self.sharedState = sharedState
        self.apiConfig = apiConfig
        self.authenticationStorage = authenticationStorage
        self.transport = transport
        self.requestEncoder = requestEncoder ?? JSONEncoder(coding: apiConfig.coding)
        self.responseDecoder = responseDecoder ?? apiConfig.coding.makeResponseDecoder()
        self.logger = logger ?? Self.logger(level: apiConfig.logging.level)
    }

    /// The live dependencies: configuration from `Configs/<environment>.json` and the environment,
    /// an ``AsyncHTTPClientTransport``, JSON coders and a logger set up from it.
    ///
    /// The authentication storage is `authenticationStorage` when given, else the one the
    /// configuration's `authentication` keys describe (``APIConfig/AuthenticationSettings``): a
    /// chain such as files then environment variables in production, or an empty
    /// ``InMemoryAuthenticationStorage`` when it names none.
    ///
    /// `service` picks one of the upstream services the file describes under `services`
    /// (``APIConfig/load(environment:configDirectory:environmentVariables:service:)``). The
    /// dependencies loaded from one file share one HTTP client, one pool of connections, for all
    /// its services with the same `http` settings: each ``API/shutdown()`` (or `transport`'s
    /// `shutdown()`) gives its share back, and the last one closes the client.
    ///
    /// ```swift
    /// let users = API(dependencies: try await APIDependencies.live(environment: "production"))
    /// let billing = API(dependencies: try await APIDependencies.live(environment: "production", service: "billing"))
    /// ```
    ///
    /// - Parameters:
    ///   - environmentVariables: The variables that override configuration keys and that an
    ///     environment storage reads; the process environment when `nil`.
    ///   - storageFactories: The storage kinds `authentication.storages` may name besides `file`
    ///     and `environment` (``AuthenticationStorageFactory``).
    ///   - sharedStateFactories: The kinds `sharedState.kind` may name (``SharedStateFactory``),
    ///     such as `ResourcefulPostgres`'s `PostgresSharedStateFactory()`.
    /// - Throws: ``APIError/Kind/invalidConfiguration`` when the configuration cannot be loaded.
    public static func live(
        environment: String,
        configDirectory: String? = nil,
        environmentVariables: [String: String]? = nil,
        authenticationStorage: (any AuthenticationStorage)? = nil,
        storageFactories: [any AuthenticationStorageFactory] = [],
        sharedStateFactories: [any SharedStateFactory] = [],
        service: String? = nil
    ) async throws -> APIDependencies {
        let variables = environmentVariables ?? TransportEnvironment.process()
        let file = APIConfig.file(environment: environment, configDirectory: configDirectory, variables: variables)
        let config = try await APIConfig.load(file: file, environmentVariables: variables, service: service)
        return try await live(
            config: config,
            environmentVariables: environmentVariables,
            authenticationStorage: authenticationStorage,
            storageFactories: storageFactories,
            sharedStateFactories: sharedStateFactories,
            sharedAs: file,
            transportEnvironment: TransportEnvironment.restricted(variables)
        )
    }

    /// The live dependencies for a configuration already loaded (``APIConfig/load(file:environmentVariables:service:)``,
    /// ``APIConfig/init(configReader:)``) or built in code: as
    /// ``live(environment:configDirectory:environmentVariables:authenticationStorage:storageFactories:sharedStateFactories:service:)``,
    /// with a transport of their own.
    ///
    /// - Throws: ``APIError/Kind/invalidConfiguration`` when a storage's or the shared state's
    ///   settings are refused, ``APIError/Kind/authentication`` when the proxy's credential
    ///   cannot be had.
    public static func live(
        config: APIConfig,
        environmentVariables: [String: String]? = nil,
        authenticationStorage: (any AuthenticationStorage)? = nil,
        storageFactories: [any AuthenticationStorageFactory] = [],
        sharedStateFactories: [any SharedStateFactory] = []
    ) async throws(APIError) -> APIDependencies {
        try await live(
            config: config, environmentVariables: environmentVariables, authenticationStorage: authenticationStorage,
            storageFactories: storageFactories, sharedStateFactories: sharedStateFactories, sharedAs: nil
        )
    }

    /// The live dependencies for `config`: an ``AsyncHTTPClientTransport``, JSON coders, a logger,
    /// and `authenticationStorage` or the storage `config.authentication` describes. The proxy's
    /// credential, when `http.proxyCredentialService` names one, is looked up in that storage once.
    ///
    /// - Throws: ``APIError/Kind/authentication`` when the proxy's credential cannot be had.
    ///
    /// - Parameters:
    ///   - storageFactories: The storage kinds known besides `file` and `environment`.
    ///   - sharedStateFactories: The kinds of shared state known.
    ///   - file: The configuration file `config` came from: the transport is shared with the other
    ///     dependencies loaded from it (``SharedTransports``); a transport of its own when `nil`.
    ///   - transportEnvironment: The variables the transport reads, as `config` was checked
    ///     against when it was loaded; `environmentVariables` (or the process's) when `nil`.
    package static func live(
        config: APIConfig,
        environmentVariables: [String: String]? = nil,
        authenticationStorage: (any AuthenticationStorage)? = nil,
        storageFactories: [any AuthenticationStorageFactory] = [],
        sharedStateFactories: [any SharedStateFactory] = [],
        sharedAs file: String?,
        transportEnvironment: [String: String]? = nil
    ) async throws(APIError) -> APIDependencies {
        let logger = Self.logger(level: config.logging.level)
        let deferred = DeferredTransport()
        let shared = try await config.sharedState.makeSharedState(
            config: config, factories: sharedStateFactories, storages: storageFactories, logger: logger, environment: environmentVariables,
            transport: deferred
        )
        do {
            let storage: any AuthenticationStorage
            if let authenticationStorage {
                storage = authenticationStorage
            } else {
                storage = try await config.authentication.makeStorage(
                    config: config, factories: storageFactories, logger: logger, environment: environmentVariables, transport: deferred,
                    sharedState: shared
                )
            }
            let transport = try await transport(
                for: config, storage: storage, environment: transportEnvironment ?? environmentVariables, sharedAs: file, logger: logger
            )
            deferred.resolve(transport)
            return APIDependencies(apiConfig: config, authenticationStorage: storage, transport: transport, logger: logger, sharedState: shared)
        } catch {
            // Nothing is left running for dependencies that were not made.
            await shared?.shutdown()
            throw error
        }
    }

    /// The live transport for `config`, with the proxy's credential from `storage` when
    /// `http.proxyCredentialService` names one; `logger` hears of settings that weaken it (once per
    /// transport made). The variables it reads (`environment`, else the process's) meet the checks
    /// of a configuration file's credentials here, where they are used, whatever the file was
    /// loaded with (``APIConfig/refuseVariablesMovingCredentials(sentBy:variables:)``).
    ///
    /// - Throws: ``APIError/Kind/invalidConfiguration`` when a variable would move the file's
    ///   credentials or lower their TLS trust; ``APIError/Kind/authentication`` when the proxy's
    ///   credential cannot be had.
    package static func transport(
        for config: APIConfig,
        storage: any AuthenticationStorage,
        environment: [String: String]?,
        sharedAs file: String? = nil,
        logger: Logger = APIDependencies.logger(level: .info)
    ) async throws(APIError) -> any HTTPTransport {
        let variables = environment ?? TransportEnvironment.current()
        if let rule = config.authentication.variableRule {
            try config.refuseVariablesMovingCredentials(sentBy: rule.credentialKeys, variables: variables)
        }
        var proxyAuthorization: String?
        if let service = config.http.proxyCredentialService {
            do {
                proxyAuthorization = try await storage.authenticationHeader(for: service)
            } catch {
                // Its text only when it is known to hold no secret.
                let why = (error as? any SecretFreeDescription).map { ": \($0.description)" } ?? " could not be looked up"
                throw APIError(kind: .authentication, detail: "the proxy's credential\(why)", underlying: error)
            }
            guard proxyAuthorization != nil else {
                throw APIError(kind: .authentication, detail: "no credential is stored for the proxy's service '\(service)'")
            }
        }
        let make = {
            AsyncHTTPClientTransport(settings: config.http, environment: variables, proxyAuthorization: proxyAuthorization, logger: logger)
        }
        guard let file else { return make() }
        let key = SharedTransports.Key(file: file, settings: config.http, proxyAuthorization: proxyAuthorization, environment: variables)
        return SharedTransports.lease(key, make: make)
    }

    /// A logger labelled `resourceful` at `level`, writing through whatever the app bootstrapped.
    static func logger(level: Logger.Level) -> Logger {
        var logger = Logger(label: "resourceful")
        logger.logLevel = level
        return logger
    }
}
