public import HTTPTypes
public import NIOCore

/// Sends one HTTP request and returns its response: the transport under an ``API``.
///
/// ``AsyncHTTPClientTransport`` is the live one. `ResourcefulTesting` has a `MockServer` to point
/// it at, a `StubTransport` for tests of one step without sockets, and `HTTPTransportConformance`,
/// the checks any transport must pass — run it against your own.
///
/// An implementation:
/// - sends the request as it is and returns any status as a response, `3xx` included: redirects
///   are followed by ``RedirectMiddleware``, which decides what may cross to another origin;
/// - sends a ``TransportBody`` of collected bytes or a stream, and returns the response's body as
///   either (a stream reports its failures as ``TransportError`` too, while it is read);
/// - gives up at ``TransportRequest/deadline`` with ``TransportError/timeout``, and when the
///   server is silent for longer than ``TransportRequest/idleTimeout`` between the request and
///   the head or between parts of the body;
/// - hands back the head first and the body as a stream, read at its reader's pace, when
///   ``TransportRequest/streamsResponseBody`` asks for it (or the body collected: the ``API``
///   reads either); a stream whose reader stops early, or whose task is cancelled, closes its
///   connection instead of returning it to a pool half-read, and a stream that ends before its
///   `Content-Length` fails;
/// - stops reading past ``TransportRequest/maxResponseBytes`` with
///   ``TransportError/responseTooLarge`` (for a streamed body, the ``API`` checks it as it
///   collects);
/// - honours task cancellation with ``TransportError/cancelled``;
/// - reports a failed connection with ``TransportError/connectionFailed(_:)`` (or
///   ``TransportError/closedBeforeAnswer(_:)`` when it closed before any of the answer arrived),
///   and a failed TLS handshake with ``TransportError/tls(_:)``.
///
/// It throws only ``TransportError`` (the requirement's typed `throws` holds every transport to
/// it): also for a request it cannot send (``TransportError/invalidRequest(_:underlying:)``),
/// settings it cannot use (``TransportError/invalidConfiguration(_:underlying:)``), a body it
/// cannot decompress (``TransportError/undecodableBody(_:)``) and a proxy that wants credentials
/// (``TransportError/proxyAuthenticationRequired(_:)``). The ``API`` turns what it throws into an
/// ``APIError`` once, with ``APIError/Stage/transport``, before any middleware sees it. A failure
/// that trying again cannot cure goes under ``TransportError/connectionFailed(_:)`` as a
/// ``FinalTransportFailure`` (as `ReplayingTransport` does with a request no recording answers).
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the response, its body collected or streamed.
    func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse

    /// Releases the transport's connections and threads. Calls after it fail.
    func shutdown() async throws
}

extension HTTPTransport {
    /// Does nothing: a transport that holds nothing to release.
    public func shutdown() async throws {}
}

/// A request as it goes to the network.
public struct TransportRequest: Sendable {
    /// The HTTP method.
    public var method: HTTPRequest.Method
    /// Where the request goes, as structure; read it rather than parsing ``url``.
    public var target: RequestTarget
    /// The absolute URL, percent-encoded, made from ``target`` each time it is read: a transport
    /// reads it once. Setting it parses the string into ``target``.
    public var url: String {
        get { target.url }
        set { target = RequestTarget(parsing: newValue, base: target) }
    }
    /// The header fields.
    public var headerFields: HTTPFields
    /// The body, if any: collected bytes, or a stream (``TransportBody``).
    public var body: TransportBody?
    /// When the whole exchange, body included, must be over.
    public var deadline: ContinuousClock.Instant
    /// The largest response body to accept, when the transport collects it.
    public var maxResponseBytes: Int
    /// Whether the caller reads the response body as it arrives: a transport that can hands it
    /// over as a stream with back-pressure once the head is in, and leaves the size to the reader
    /// (``maxResponseBytes`` does not apply); one that cannot returns the body collected.
    public var streamsResponseBody = false
    /// The longest wait for the response head or for the next part of a body still arriving;
    /// `nil` for none beyond ``deadline``. Passed, it fails the exchange with
    /// ``TransportError/timeout``. A reader that is slower than the network does not count: the
    /// wait is for the server.
    public var idleTimeout: Duration?
    /// Whether the request body must never be shown or kept: logs, recordings
    /// (`RecordingTransport`) and cURL exports leave it out, naming only its size
    /// (``ResourceRequest/shouldRedactRequestBody``).
    public var shouldRedactRequestBody = false
    /// Whether the response body must never be shown or kept: logs and recordings leave it out
    /// (``ResourceRequest/shouldRedactResponseBody``).
    public var shouldRedactResponseBody = false

    /// Creates a request for `target`.
    public init(
        method: HTTPRequest.Method,
        target: RequestTarget,
        headerFields: HTTPFields = [:],
        body: TransportBody? = nil,
        deadline: ContinuousClock.Instant,
        maxResponseBytes: Int
    ) {
        self.method = method
        self.target = target
        self.headerFields = headerFields
        self.body = body
        self.deadline = deadline
        self.maxResponseBytes = maxResponseBytes
    }

    /// Creates a request for the absolute URL `url` (parsed into ``target``).
    public init(
        method: HTTPRequest.Method,
        url: String,
        headerFields: HTTPFields = [:],
        body: TransportBody? = nil,
        deadline: ContinuousClock.Instant,
        maxResponseBytes: Int
    ) {
        self.init(
            method: method,
            target: RequestTarget(parsing: url),
            headerFields: headerFields,
            body: body,
            deadline: deadline,
            maxResponseBytes: maxResponseBytes
        )
    }

    /// Creates a request for the absolute URL `url` with a body of collected bytes.
    public init(
        method: HTTPRequest.Method,
        url: String,
        headerFields: HTTPFields = [:],
        body: ByteBuffer?,
        deadline: ContinuousClock.Instant,
        maxResponseBytes: Int
    ) {
        self.init(
            method: method,
            url: url,
            headerFields: headerFields,
            body: body.map(TransportBody.init),
            deadline: deadline,
            maxResponseBytes: maxResponseBytes
        )
    }
}

/// A response as it came from the network: status, header fields and a body, collected or
/// streamed.
public struct TransportResponse: Sendable {
    /// The status.
    public var status: HTTPResponse.Status
    /// The header fields.
    public var headerFields: HTTPFields
    /// The body: collected bytes (empty when there was none), or a stream still arriving.
    public var body: TransportBody
    /// The targets that answered with a redirect before this response, in order; empty when
    /// none was followed. Set by ``RedirectMiddleware``: a step before it that sees a response
    /// with redirects knows it answers another URL than the request's.
    public var redirects: [RequestTarget] = []
    /// The protocol version the answer came in, as a status line writes it (`HTTP/1.1`,
    /// `HTTP/2`), when the transport says it; `nil` otherwise (a recording, an answer a step made).
    public var httpVersion: String?
    /// Whether the response was answered from the HTTP cache rather than by the upstream now:
    /// its rate-limit fields say nothing of the upstream's present limits.
    package var servedFromCache = false
    /// The byte cap, deadline and redaction switches of the request the transport answered, as the steps before it
    /// left them (``CallContext/options``), set by the ``API``: the call collects the body under
    /// them. A response a step makes itself (a cached one, a body transformed, an answer of its
    /// own) is given those of the answer it replaced, or of the request the step received, with
    /// any redaction switch either set.
    package var collectionLimits: CollectionLimits?

    /// How a response body is collected: at most ``maxBytes``, by ``deadline``; and whether the
    /// request and response bodies were to be redacted when the transport answered (the
    /// switches a step after the logging step may have set).
    package struct CollectionLimits: Sendable {
        var maxBytes: Int
        var deadline: ContinuousClock.Instant
        var redactsRequestBody = false
        var redactsResponseBody = false
    }

    /// Fills ``collectionLimits`` of a response a step made itself (from the answer it was given,
    /// or without one) so that the contract holds whoever built it: the byte cap and deadline of
    /// `answered` (what the steps after it answered last) or else of `request` (what the step was
    /// given), and a redaction switch set by either. A response with limits keeps them.
    package mutating func keepCollectionLimits(of request: TransportRequest, answered: CollectionLimits?) {
        guard collectionLimits == nil else { return }
        var limits = answered ?? CollectionLimits(maxBytes: request.maxResponseBytes, deadline: request.deadline)
        limits.redactsRequestBody = limits.redactsRequestBody || request.shouldRedactRequestBody
        limits.redactsResponseBody = limits.redactsResponseBody || request.shouldRedactResponseBody
        collectionLimits = limits
    }

    /// Creates a response.
    public init(status: HTTPResponse.Status, headerFields: HTTPFields = [:], body: TransportBody = TransportBody()) {
        self.status = status
        self.headerFields = headerFields
        self.body = body
    }

    /// Creates a response with a body of collected bytes.
    public init(status: HTTPResponse.Status, headerFields: HTTPFields = [:], body: ByteBuffer) {
        self.init(status: status, headerFields: headerFields, body: TransportBody(body))
    }
}
