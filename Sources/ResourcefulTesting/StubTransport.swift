public import Resourceful

/// An ``HTTPTransport`` that answers with a closure and records what it was sent: for tests of one
/// step of a call without sockets. Tests of whole calls should use ``MockServer``.
public final class StubTransport: HTTPTransport {
    /// Answers a request.
    typealias Handler = @Sendable (TransportRequest) async throws -> TransportResponse

    private let handler: Handler
    private let recorded = Locked<[TransportRequest]>([])

    /// Creates a client answering with `handler`.
    public init(_ handler: @escaping @Sendable (TransportRequest) async throws -> TransportResponse) {
        self.handler = handler
    }

    /// Every request sent so far.
    public var requests: [TransportRequest] {
        recorded.withLock { $0 }
    }

    /// Records `request` and answers it.
    public func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        // A handler's, a cassette's or a recording's own error, as a transport reports it.
        try await TransportError.reporting { try await answer(request) }
    }

    /// ``send(_:)``, throwing what went wrong as it is.
    private func answer(_ request: TransportRequest) async throws -> TransportResponse {
        recorded.withLock { $0.append(request) }
        return try await handler(request)
    }
}
