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
        case invalidRequest, invalidConfiguration, undecodableBody, proxyAuthenticationRequired
    }

    package let kind: Kind
    package let underlying: (any Error)?
    /// Whether the connection closed before any of the answer arrived, so that the request can be
    /// sent again at once.
    package let closedBeforeAnswer: Bool
    /// A note on what was wrong, free of secrets, for the ``APIError/detail``.
    package let detail: String?
    /// Whether another attempt may help (a connection failure the transport reported as such),
    /// unless ``underlying`` is a ``FinalTransportFailure``.
    package var retryable = true

    package init(_ kind: Kind, underlying: (any Error)? = nil, closedBeforeAnswer: Bool = false, detail: String? = nil) {
        self.kind = kind
        self.underlying = underlying
        self.closedBeforeAnswer = closedBeforeAnswer
        self.detail = detail.map(Self.oneLine)
    }

    /// What `body` returns, or what it throws as the transport reports it
    /// (``unclassified(_:)``): the way a transport over code that throws other errors (a
    /// handler, a cassette, a recording) keeps to `throws(TransportError)`.
    package static func reporting<T>(_ body: () async throws -> T) async throws(TransportError) -> T {
        do {
            return try await body()
        } catch {
            throw unclassified(error)
        }
    }

    /// `error`, thrown under a transport, as the transport reports it: a ``TransportError`` as it
    /// is, a cancellation as ``cancelled``, anything else (a transport's own error that names no
    /// kind) as a connection failure that is not tried again, with `error` underneath.
    package static func unclassified(_ error: any Error) -> TransportError {
        switch error {
        case let error as TransportError: return error
        case is CancellationError: return .cancelled
        default:
            var failure = TransportError(.connectionFailed, underlying: error)
            failure.retryable = false
            return failure
        }
    }

    /// `text` as it may stand in a one-line description or log line: without control, format,
    /// separator or invisible characters, at most 512 Unicode scalars.
    static func oneLine(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        var count = 0
        for scalar in text.unicodeScalars where count < 512 {
            switch scalar.properties.generalCategory {
            // Controls (C0, C1, NEL), format characters, line and paragraph separators.
            case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: continue
            default:
                guard !scalar.properties.isDefaultIgnorableCodePoint else { continue }
                scalars.append(scalar)
                count += 1
            }
        }
        return String(scalars)
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
    /// The body ended after `received` bytes, before the `expected` its `Content-Length` (or a
    /// `Content-Range`) announced: reported as ``APIError/Kind/transport``.
    public static func bodyEndedEarly(received: Int, expected: Int) -> TransportError {
        TransportError(.connectionFailed, detail: "the body ended after \(received) of its \(expected) bytes")
    }
    /// The server sent nothing for `idle` (``TransportRequest/idleTimeout``) while the head or the
    /// body's next part was awaited: reported as ``APIError/Kind/timeout``.
    public static func idle(_ idle: Duration) -> TransportError {
        TransportError(.timeout, detail: "the server sent nothing for \(idle.nanoseconds / 1_000_000) ms")
    }
    /// The TLS handshake failed: reported as ``APIError/Kind/tls``, never retried.
    public static func tls(_ underlying: any Error) -> TransportError {
        TransportError(.tls, underlying: underlying)
    }

    /// The transport cannot send this request as it is (a URL it cannot read, a limit outside
    /// what it supports): reported as ``APIError/Kind/invalidRequest`` with `reason` as its
    /// detail, never retried. `reason` must hold no secret: it is shown.
    public static func invalidRequest(_ reason: String, underlying: (any Error)? = nil) -> TransportError {
        TransportError(.invalidRequest, underlying: underlying, detail: reason)
    }
    /// The transport was set up with settings it cannot use (a proxy URL, a certificate that
    /// does not match its key): reported as ``APIError/Kind/invalidConfiguration`` with `reason`
    /// as its detail, never retried. `reason` must hold no secret: it is shown.
    public static func invalidConfiguration(_ reason: String, underlying: (any Error)? = nil) -> TransportError {
        TransportError(.invalidConfiguration, underlying: underlying, detail: reason)
    }
    /// The body arrived but cannot be read as its `Content-Encoding` says (a broken gzip stream):
    /// reported as ``APIError/Kind/decodingFailed``.
    public static func undecodableBody(_ underlying: any Error) -> TransportError {
        TransportError(.undecodableBody, underlying: underlying, detail: "the compressed body could not be decompressed")
    }
    /// A forward proxy answered `407 Proxy Authentication Required`: reported as
    /// ``APIError/Kind/authentication``.
    public static func proxyAuthenticationRequired(_ underlying: (any Error)? = nil) -> TransportError {
        TransportError(
            .proxyAuthenticationRequired,
            underlying: underlying,
            detail: "the proxy asked for credentials (407): name them in http.proxyCredentialService"
        )
    }

    /// The kind, and the note on what was wrong, without the underlying error's text.
    public var description: String { "TransportError.\(kind.rawValue)" + (detail.map { ": " + $0 } ?? "") }

    /// This error as the ``APIError`` a call reports.
    var apiError: APIError {
        let apiKind: APIError.Kind =
            switch kind {
            case .timeout: .timeout
            case .responseTooLarge: .responseTooLarge
            case .tls: .tls
            case .cancelled: .cancelled
            case .invalidRequest: .invalidRequest
            case .invalidConfiguration: .invalidConfiguration
            case .undecodableBody: .decodingFailed
            case .proxyAuthenticationRequired: .authentication
            case .connectionFailed: .transport
            }
        // What to look at, never what the certificate holds.
        let detail: String? =
            kind == .tls
            ? "the TLS handshake failed: check that http.tls.caFile or http.tls.caDirectory names the server's CA, "
                + "that the baseURL's host is one the certificate names, and http.tls.minimumVersion"
            : self.detail ?? (underlying as? ConnectionNotMade).map { Self.oneLine($0.description) }
        var error = APIError(kind: apiKind, detail: detail, underlying: underlying)
        error.closedBeforeAnswer = closedBeforeAnswer
        error.mayRetry = apiKind == .transport && retryable && (underlying as? any FinalTransportFailure)?.isFinal != true
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
