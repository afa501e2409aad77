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
public struct APIService: Service {
    /// The API whose client this service owns.
    let api: API

    /// Creates a service owning `api`'s client.
    public init(api: API) {
        self.api = api
    }

    /// Waits for graceful shutdown or cancellation, then shuts the client down.
    public func run() async throws {
        // Either way the wait ends, the client is released; cancellation is not an error here.
        try? await gracefulShutdown()
        try await api.shutdown()
    }
}
