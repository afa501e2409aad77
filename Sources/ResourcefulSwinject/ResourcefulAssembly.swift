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
/// given dependencies'.
public struct ResourcefulAssembly: Assembly, Sendable {
    /// The dependencies the parts are taken from.
    public let dependencies: APIDependencies
    private let ended = ShutdownOnce()

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
        if !container.hasAnyRegistration(of: APIDependencies.self) {
            container.register(APIDependencies.self) { resolver in
                var parts = given
                // Each part as the container has it now; the given one if it was removed.
                parts.apiConfig = resolver.resolve(APIConfig.self) ?? given.apiConfig
                parts.authenticationStorage = resolver.resolve((any AuthenticationStorage).self) ?? given.authenticationStorage
                parts.transport = resolver.resolve((any HTTPTransport).self) ?? given.transport
                parts.requestEncoder = resolver.resolve((any RequestEncoder).self) ?? given.requestEncoder
                parts.responseDecoder = resolver.resolve((any ResponseDecoder).self) ?? given.responseDecoder
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

    /// Shuts the given dependencies' transport and shared state down (``API/shutdown()``), once
    /// however many times it is called: the end of the container's life. Callers at once wait
    /// for the one shutdown; one that failed is tried again by the next call. A part registered
    /// in their place is its registrar's to end.
    public func shutdown() async throws {
        let dependencies = self.dependencies
        try await ended.run { try await API(dependencies: dependencies).shutdown() }
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
