/// Why a transport could not complete an exchange: what an ``HTTPTransport`` written outside
/// this package throws, so that the ``API`` reports it with the right ``APIError/Kind`` and retries
/// only what may succeed on a second try.
///
/// ```swift
/// guard ContinuousClock.now < request.deadline else { throw TransportError.timeout }
/// ```
public struct TransportError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    package enum Kind: String, Sendable, Hashable {
        case timeout, responseTooLarge, connectionFailed, tls, cancelled
    }

    package let kind: Kind
    package let underlying: (any Error)?
    /// Whether the connection closed before any of the answer arrived, so that the request can be
    /// sent again at once.
    package let closedBeforeAnswer: Bool

    package init(_ kind: Kind, underlying: (any Error)? = nil, closedBeforeAnswer: Bool = false) {
        self.kind = kind
        self.underlying = underlying
        self.closedBeforeAnswer = closedBeforeAnswer
    }

    /// The request's deadline passed: reported as ``APIError/Kind/timeout``.
    public static var timeout: TransportError { TransportError(.timeout) }
    /// The response body was larger than ``TransportRequest/maxResponseBytes``: reported as
    /// ``APIError/Kind/responseTooLarge``.
    public static var responseTooLarge: TransportError { TransportError(.responseTooLarge) }
    /// The calling task was cancelled: reported as ``APIError/Kind/cancelled``.
    public static var cancelled: TransportError { TransportError(.cancelled) }
    /// The connection could not be made, or broke during the exchange: reported as
    /// ``APIError/Kind/transport`` and retried where the request allows it.
    public static func connectionFailed(_ underlying: any Error) -> TransportError {
        TransportError(.connectionFailed, underlying: underlying)
    }
    /// The connection closed (or was reset) before any of the answer arrived: reported as
    /// ``APIError/Kind/transport``, and sent again at once on a fresh connection.
    public static func closedBeforeAnswer(_ underlying: any Error) -> TransportError {
        TransportError(.connectionFailed, underlying: underlying, closedBeforeAnswer: true)
    }
    /// The TLS handshake failed: reported as ``APIError/Kind/tls``, never retried.
    public static func tls(_ underlying: any Error) -> TransportError {
        TransportError(.tls, underlying: underlying)
    }

    /// The kind, without the underlying error's text.
    public var description: String { "TransportError.\(kind.rawValue)" }

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
        // What to look at, never what the certificate holds.
        let detail: String? =
            kind == .tls
            ? "the TLS handshake failed: check that http.tls.caFile or http.tls.caDirectory names the server's CA, "
                + "that the baseURL's host is one the certificate names, and http.tls.minimumVersion"
            : (underlying as? ConnectionNotMade)?.description
        var error = APIError(kind: apiKind, detail: detail, underlying: underlying)
        error.closedBeforeAnswer = closedBeforeAnswer
        error.mayRetry = apiKind == .transport && (underlying as? any FinalTransportFailure)?.isFinal != true
        return error
    }
}

/// An error under a ``TransportError/connectionFailed(_:)`` that trying again cannot cure, such as
/// connections refused until the connect-retry budget was spent: reported as
/// ``APIError/Kind/transport``, but not retried by the retry policy while ``isFinal``. (An error a transport throws
/// that is not a ``TransportError`` at all, such as a replayed request that no recording answers,
/// is never retried either.)
public protocol FinalTransportFailure: Error {
    /// Whether the retry policy must not try again; `true` unless the type says otherwise.
    var isFinal: Bool { get }
}

extension FinalTransportFailure {
    /// Never tried again.
    public var isFinal: Bool { true }
}
