/// Why a transport could not complete an exchange: what an ``HTTPTransport`` written outside
/// this package throws, so that the ``API`` reports it with the right ``APIError/Kind`` and retries
/// only what may succeed on a second try.
///
/// ```swift
/// guard ContinuousClock.now < request.deadline else { throw TransportError.timeout }
/// ```
public struct TransportError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is; compare with the static members.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Code: String, Sendable, Hashable {
            case timeout, responseTooLarge, connectionFailed, tls, cancelled
        }

        private let code: Code

        /// The request's deadline passed: ``APIError/Kind/timeout``.
        public static let timeout = Kind(code: .timeout)
        /// The body was larger than the request allows: ``APIError/Kind/responseTooLarge``.
        public static let responseTooLarge = Kind(code: .responseTooLarge)
        /// The connection could not be made or broke: ``APIError/Kind/transport``, retried.
        public static let connectionFailed = Kind(code: .connectionFailed)
        /// The TLS handshake failed: ``APIError/Kind/tls``, never retried.
        public static let tls = Kind(code: .tls)
        /// The calling task was cancelled: ``APIError/Kind/cancelled``.
        public static let cancelled = Kind(code: .cancelled)

        /// The kind's name.
        public var description: String { code.rawValue }
    }

    /// What kind of failure this is.
    public let kind: Kind
    /// The error underneath, such as the connection's own.
    public let underlying: (any Error)?
    /// Whether the connection closed before any of the answer arrived, so that the request can be
    /// sent again at once.
    public let closedBeforeAnswer: Bool

    /// Creates an error of `kind`.
    public init(_ kind: Kind, underlying: (any Error)? = nil, closedBeforeAnswer: Bool = false) {
        self.kind = kind
        self.underlying = underlying
        self.closedBeforeAnswer = closedBeforeAnswer
    }

    /// The request's deadline passed.
    public static var timeout: TransportError { TransportError(.timeout) }
    /// The response body was larger than ``TransportRequest/maxResponseBytes``.
    public static var responseTooLarge: TransportError { TransportError(.responseTooLarge) }
    /// The calling task was cancelled.
    public static var cancelled: TransportError { TransportError(.cancelled) }
    /// The connection could not be made, or broke during the exchange.
    public static func connectionFailed(_ underlying: any Error) -> TransportError {
        TransportError(.connectionFailed, underlying: underlying)
    }
    /// The connection closed (or was reset) before any of the answer arrived.
    public static func closedBeforeAnswer(_ underlying: any Error) -> TransportError {
        TransportError(.connectionFailed, underlying: underlying, closedBeforeAnswer: true)
    }
    /// The TLS handshake failed.
    public static func tls(_ underlying: any Error) -> TransportError {
        TransportError(.tls, underlying: underlying)
    }

    /// The kind, without the underlying error's text.
    public var description: String { "TransportError.\(kind)" }

    /// This error as the ``APIError`` a call reports.
    var apiError: APIError {
        let apiKind: APIError.Kind =
            switch kind {
            case .timeout: .timeout
            case .responseTooLarge: .responseTooLarge
            case .tls: .tls
            case .cancelled: .cancelled
            default: .transport
            }
        var error = APIError(kind: apiKind, underlying: underlying)
        error.closedBeforeAnswer = closedBeforeAnswer
        return error
    }
}
