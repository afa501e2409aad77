public import Resourceful
public import Swinject

/// A Swinject `Assembly` that registers ``APIConfig``, each dependency of an ``API``, the
/// ``APIDependencies`` made of them and one ``API`` (container scope).
///
/// ```swift
/// let resourceful = try await ResourcefulAssembly.live(environment: "production")
/// let assembler = Assembler([resourceful, AppAssembly()])
/// let api = assembler.resolver.resolve(API.self)!   // at start-up: hand the API on from there
/// // ...
/// try await resourceful.shutdown()
/// ```
///
/// A Swinject `Container` is not safe to resolve from many threads at once: resolve the ``API``
/// at start-up and pass it on (an ``API`` is a `Sendable` value), or resolve through
/// `container.synchronize()`.
///
/// Each part can be replaced by registering it: after the assembly (the later registration wins),
/// or before it (the assembly leaves a part already registered alone). The ``API`` is made from
/// the container's parts when it is first resolved, so a test container swaps one part:
///
/// ```swift
/// let container = Container()
/// ResourcefulAssembly(dependencies: APIDependencies(apiConfig: config, transport: StubTransport { _ in ... }))
///     .assemble(container: container)
/// container.register((any AuthenticationStorage).self) { _ in InMemoryAuthenticationStorage(["example-api": "Bearer test"]) }
/// ```
///
/// The parts registered are ``APIConfig``, `(any AuthenticationStorage)`, `(any HTTPTransport)`,
/// `(any RequestEncoder)` and `(any ResponseDecoder)`; the logger and the shared state are the
/// given dependencies'. A configuration registered with another origin than the given one's is
/// another server: it gets an empty storage and a client of its own unless a storage and a
/// transport are registered for it too.
public struct ResourcefulAssembly: Assembly, Sendable {
    /// The dependencies the parts are taken from.
    let dependencies: APIDependencies
    private let ended = ShutdownOnce()
    /// The clients made for a configuration registered with another origin, ended with the rest.
    private let madeTransports = Locked<[AsyncHTTPClientTransport]>([])

    /// An assembly of `dependencies`' parts.
    public init(dependencies: APIDependencies) {
        self.dependencies = dependencies
    }

    /// An assembly of the live dependencies of `Configs/<environment>.json`
    /// (``APIDependencies/live(environment:configDirectory:environmentVariables:authenticationStorage:storageFactories:sharedStateFactories:service:)``):
    /// made before the container, as their making waits on files and storages, which a Swinject
    /// factory cannot.
    ///
    /// - Throws: ``APIError/Kind/invalidConfiguration`` when the configuration cannot be loaded.
    public static func live(
        environment: String,
        configDirectory: String? = nil,
        environmentVariables: [String: String]? = nil,
        storageFactories: [any AuthenticationStorageFactory] = [],
        sharedStateFactories: [any SharedStateFactory] = [],
        service: String? = nil
    ) async throws -> ResourcefulAssembly {
        ResourcefulAssembly(
            dependencies: try await APIDependencies.live(
                environment: environment, configDirectory: configDirectory, environmentVariables: environmentVariables,
                storageFactories: storageFactories, sharedStateFactories: sharedStateFactories, service: service))
    }

    /// Registers the parts not registered yet, the ``APIDependencies`` made of the container's
    /// parts, and one ``API`` made of those.
    public func assemble(container: Container) {
        let given = dependencies
        func registerUnlessRegistered<Part>(_ type: Part.Type, _ part: Part) {
            guard !container.hasAnyRegistration(of: type) else { return }
            container.register(type) { _ in part }
        }
        registerUnlessRegistered(APIConfig.self, given.apiConfig)
        registerUnlessRegistered((any AuthenticationStorage).self, given.authenticationStorage)
        registerUnlessRegistered((any HTTPTransport).self, given.transport)
        registerUnlessRegistered((any RequestEncoder).self, given.requestEncoder)
        registerUnlessRegistered((any ResponseDecoder).self, given.responseDecoder)
        let made = madeTransports
        if !container.hasAnyRegistration(of: APIDependencies.self) {
            container.register(APIDependencies.self) { resolver in
                var parts = given
                // Each part as the container has it now; the given one if it was removed.
                parts.apiConfig = resolver.resolve(APIConfig.self) ?? given.apiConfig
                parts.authenticationStorage = resolver.resolve((any AuthenticationStorage).self) ?? given.authenticationStorage
                parts.transport = resolver.resolve((any HTTPTransport).self) ?? given.transport
                parts.requestEncoder = resolver.resolve((any RequestEncoder).self) ?? given.requestEncoder
                parts.responseDecoder = resolver.resolve((any ResponseDecoder).self) ?? given.responseDecoder
                // A configuration calling another origin is another server: it inherits neither
                // the given credentials nor the given client (its TLS client key, its proxy's
                // credential), only parts registered for it.
                if !parts.apiConfig.callsSameOrigin(as: given.apiConfig) {
                    if Self.isGiven(parts.authenticationStorage, given.authenticationStorage) {
                        parts.authenticationStorage = InMemoryAuthenticationStorage()
                    }
                    if Self.isGiven(parts.transport, given.transport) {
                        let transport = AsyncHTTPClientTransport(settings: parts.apiConfig.http)
                        made.withLock { $0.append(transport) }
                        parts.transport = transport
                    }
                }
                return parts
            }
        }
        if !container.hasAnyRegistration(of: API.self) {
            container.register(API.self) { resolver in
                API(dependencies: resolver.resolve(APIDependencies.self) ?? given)
            }
            .inObjectScope(.container)
        }
    }

    /// Waits for the shared state's writes still in flight (``SharedState/drain()``), then shuts
    /// the clients it made and the given dependencies' transport and shared state down
    /// (``API/shutdown()``), once
    /// however many times it is called: the end of the container's life. Callers at once wait
    /// for the one shutdown; one that failed is tried again by the next call. A part registered
    /// in their place is its registrar's to end.
    public func shutdown() async throws {
        let dependencies = self.dependencies
        let made = madeTransports
        try await ended.run {
            // The shared state's writes still in flight (a renewal whose answer brings a rotated
            // refresh token, maybe through a client made here) end before any client closes.
            await dependencies.sharedState?.drain()
            for transport in made.withLock({ $0 }) { try await transport.shutdown() }
            try await API(dependencies: dependencies).shutdown()
        }
    }

    /// Whether `part` is `given`: the same instance, or for a value, the same type (a part of the
    /// same type registered in its place is taken for the given one: the safe side).
    private static func isGiven(_ part: Any, _ given: Any) -> Bool {
        if type(of: part) is AnyClass, type(of: given) is AnyClass {
            return (part as AnyObject) === (given as AnyObject)
        }
        return type(of: part) == type(of: given)
    }
}

/// Work done once: callers at once wait for the same run; a run that failed is tried again.
final class ShutdownOnce: Sendable {
    private let task = Locked<Task<Void, any Error>?>(nil)

    func run(_ work: @escaping @Sendable () async throws -> Void) async throws {
        let running = task.withLock { task in
            if let task { return task }
            let started = Task { try await work() }
            task = started
            return started
        }
        do {
            try await running.value
        } catch {
            task.withLock { task in
                if task == running { task = nil }
            }
            throw error
        }
    }
}
