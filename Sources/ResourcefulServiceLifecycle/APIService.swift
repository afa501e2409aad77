public import Resourceful
public import ServiceLifecycle

/// Owns an ``API``'s HTTP client in a swift-service-lifecycle `ServiceGroup`: runs until the group
/// shuts down (on SIGTERM, say), then shuts the client down, after in-flight calls are done.
///
/// Put it *before* the services that make calls, so that the group, which stops services in
/// reverse order, stops them first:
///
/// ```swift
/// let api = API(dependencies: try await APIDependencies.live(environment: "production"))
/// let group = ServiceGroup(
///     services: [APIService(api: api), app],
///     gracefulShutdownSignals: [.sigterm, .sigint],
///     logger: logger
/// )
/// try await group.run()
/// ```
///
/// An API made elsewhere, such as `ResourcefulDependencies`' `@Dependency(\.api)`, is ended by
/// its own shutdown, once: `APIService(shutdown: api.shutdown)`.
public struct APIService: Service {
    /// Ends what this service owns.
    let shutdown: @Sendable () async throws -> Void

    /// Creates a service owning `api`'s client.
    public init(api: API) {
        shutdown = { try await api.shutdown() }
    }

    /// Creates a service that calls `shutdown` when the group shuts down.
    public init(shutdown: @escaping @Sendable () async throws -> Void) {
        self.shutdown = shutdown
    }

    /// Waits for graceful shutdown or cancellation, then shuts the client down.
    public func run() async throws {
        // Either way the wait ends, the client is released; cancellation is not an error here.
        try? await gracefulShutdown()
        try await shutdown()
    }
}
