import Foundation
public import Resourceful

/// The ``Dependencies/DependencyValues/api`` dependency: one ``API``, made from the configuration
/// on first use (the live value) or given (a test's or a preview's).
///
/// ```swift
/// struct UserController {
///     @Dependency(\.api) var api
///
///     func user(_ id: Int) async throws -> User {
///         try await api.call(ShowUser(id: id))
///     }
/// }
/// ```
///
/// `api.call(_:)` calls through the API; `try await api()` is the ``API`` itself, for its other
/// entry points (streams, downloads, pages). The live value is made once, by the first call that
/// needs it, and shared by every copy; ``shutdown()`` ends it once.
public struct APIDependency: Sendable {
    private enum Source: Sendable {
        case given(API)
        case live(LiveAPI)
    }

    private let source: Source

    /// A dependency that is `api`.
    public init(_ api: API) {
        source = .given(api)
    }

    /// An ``API`` over `transport` with `config`, for a test or a preview: a `StubTransport`, a
    /// `ReplayingTransport` of a HAR cassette, or the transport of a `MockServer`, in one line.
    ///
    /// ```swift
    /// try await withDependencies {
    ///     $0.api = APIDependency(transport: try ReplayingTransport(file: cassette))
    /// } operation: {
    ///     try await UserController().user(42)
    /// }
    /// ```
    public init(config: APIConfig = APIDependency.placeholderConfig, transport: any HTTPTransport) {
        self.init(API(dependencies: APIDependencies(apiConfig: config, transport: transport)))
    }

    /// The live dependency: an ``API`` made by `make` when a call first needs it, shared by every
    /// copy of this value, made again only when making it failed.
    public static func live(_ make: @escaping @Sendable () async throws -> API) -> APIDependency {
        APIDependency(source: .live(LiveAPI(make: make)))
    }

    /// The live dependency made from `<folder>/<environment>.json` (as
    /// ``APIDependencies/live(environment:configDirectory:environmentVariables:authenticationStorage:storageFactories:sharedStateFactories:service:)``)
    /// when a call first needs it; `environment` defaults to the variable `RESOURCEFUL_ENV`, else
    /// `development`, and must be a file's name.
    ///
    /// The folder is `configDirectory`, else an absolute `RESOURCEFUL_CONFIG_DIR`: both are
    /// chosen. Else it is the working directory's `Configs` (or a relative
    /// `RESOURCEFUL_CONFIG_DIR`), which may be a cloned repository's: its file configures calls,
    /// but one that names credentials (storages, a TLS client key, a proxy credential) is refused
    /// with ``APIError/Kind/invalidConfiguration``, as the command-line tool refuses it.
    ///
    /// Storage kinds and shared state from other modules are passed here, once, where the app
    /// starts:
    ///
    /// ```swift
    /// prepareDependencies {
    ///     $0.api = .live(configDirectory: "/srv/app/Configs", storageFactories: [KeyringStorageFactory(), OAuth2StorageFactory()])
    /// }
    /// ```
    public static func live(
        environment: String? = nil,
        configDirectory: String? = nil,
        environmentVariables: [String: String]? = nil,
        storageFactories: [any AuthenticationStorageFactory] = [],
        sharedStateFactories: [any SharedStateFactory] = [],
        service: String? = nil
    ) -> APIDependency {
        live {
            let variables = environmentVariables ?? TransportEnvironment.process()
            let name = environment ?? variables[environmentVariable].flatMap { $0.isEmpty ? nil : $0 } ?? defaultEnvironment
            // A name, not a path: a variable set by something else picks a file among the
            // folder's, never one elsewhere.
            guard isEnvironmentName(name) else {
                throw APIError(
                    kind: .invalidConfiguration,
                    detail: "\(environmentVariable) must name a configuration file in the folder (letters, digits, '-', '_' or '.', not first)")
            }
            // Read as `APIConfig.load(environment:)` reads it: a folder no one chose (the working
            // directory's `Configs`, a relative RESOURCEFUL_CONFIG_DIR) configures calls, but
            // names no credential, since nothing here said where the configuration is.
            let config = try await APIConfig.load(
                environment: name, configDirectory: configDirectory, environmentVariables: variables, service: service)
            let howToChoose = "set an absolute RESOURCEFUL_CONFIG_DIR, or `$0.api = .live(configDirectory: ...)` in prepareDependencies"
            try config.refuseCredentialsFromUnchosenFile(howToChoose: howToChoose)
            // Shared state reads its own secrets (a database password, sealing keys) and sends
            // them to the host it names.
            if config.sharedState.kind != nil, let origin = config.authentication.origin, !origin.isChosen {
                throw APIError(
                    kind: .invalidConfiguration,
                    detail: "\(origin.file) was found by default, not chosen: it may not name shared state (sharedState.kind), whose secrets go to the host it names; \(howToChoose)")
            }
            let file = APIConfig.file(environment: name, configDirectory: configDirectory, variables: variables)
            let dependencies = try await APIDependencies.live(
                config: config, environmentVariables: environmentVariables, storageFactories: storageFactories,
                sharedStateFactories: sharedStateFactories, sharedAs: file, transportEnvironment: TransportEnvironment.restricted(variables))
            return API(dependencies: dependencies)
        }
    }

    /// Whether `name` names a file in a folder: letters, digits, `-`, `_` and `.`, not first.
    static func isEnvironmentName(_ name: String) -> Bool {
        guard let first = name.utf8.first, first != UInt8(ascii: "."), name.utf8.count <= 128 else { return false }
        return name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
            case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."): true
            default: false
            }
        }
    }

    /// The variable naming the configuration environment of the live value: `RESOURCEFUL_ENV`.
    package static let environmentVariable = "RESOURCEFUL_ENV"
    /// The configuration environment when `RESOURCEFUL_ENV` is not set: `development`.
    package static let defaultEnvironment = "development"

    /// The configuration of an API made over a transport alone: a base URL that resolves nowhere
    /// (`http://resourceful.invalid/`), the defaults otherwise.
    @usableFromInline package static var placeholderConfig: APIConfig {
        // A literal URL that parses: RFC 2606 reserves `.invalid`.
        APIConfig(baseURL: URL(string: "http://resourceful.invalid/")!, service: "api")
    }

    private init(source: Source) {
        self.source = source
    }

    /// The ``API``: the given one, or the live one (made now if no call made it yet).
    ///
    /// - Throws: what making it threw (``APIError/Kind/invalidConfiguration`` for a configuration
    ///   that cannot be loaded), or ``APIError/Kind/cancelled`` after ``shutdown()``.
    public func callAsFunction() async throws -> API {
        switch source {
        case .given(let api): api
        case .live(let live): try await live.api()
        }
    }

    /// Calls `request` through the ``API`` and returns its decoded value.
    ///
    /// - Throws: ``APIError``: a failure to make the live API comes out as its own error.
    public func call<Request: ResourceRequest>(_ request: Request) async throws -> Request.ResourceType {
        try await callAsFunction().call(request)
    }

    /// Shuts the ``API`` down: the live one once, however many copies ask, and only if it was
    /// made; a given one each time (it is the caller's). Calls through the live value fail after
    /// it.
    public func shutdown() async throws {
        switch source {
        case .given(let api): try await api.shutdown()
        case .live(let live): try await live.shutdown()
        }
    }
}
