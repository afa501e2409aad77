/// The API's transport, for storages made before it (a storage answers the proxy's credential,
/// which the transport needs): it sends through the transport once the dependencies are made,
/// and fails with ``TransportError/invalidConfiguration(_:underlying:)`` before. Shutting it down
/// does nothing: the API owns the transport.
package final class DeferredTransport: HTTPTransport {
    private let target = Locked<(any HTTPTransport)?>(nil)

    /// A transport that fails until it is resolved.
    package init() {}

    /// Sends through `transport` from now on.
    package func resolve(_ transport: any HTTPTransport) {
        target.withLock { $0 = transport }
    }

    package func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        guard let transport = target.withLock({ $0 }) else {
            throw TransportError.invalidConfiguration("a storage made a request before the API's transport was ready (the proxy's credential?)")
        }
        return try await transport.send(request)
    }

    package func shutdown() async throws {}
}
