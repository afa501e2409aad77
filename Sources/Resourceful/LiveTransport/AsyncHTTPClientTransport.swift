public import AsyncHTTPClient
import Foundation
import HTTPTypes
package import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
import NIOSSL
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The live ``HTTPTransport``: one long-lived AsyncHTTPClient with pooled connections.
///
/// Create one per process (``APIDependencies/live(environment:configDirectory:environmentVariables:authenticationStorage:storageFactories:sharedStateFactories:service:)``
/// does) and call ``shutdown()`` when done. Redirects are not followed: a `3xx` reaches the ``API``
/// as a response, so a credential is never sent on to another host. A proxy (``APIConfig/HTTPSettings/proxy``
/// or the environment's variables) never carries a loopback target (`localhost`, `127.0.0.0/8`,
/// `::1`): what plain http sends there stays on the machine.
public final class AsyncHTTPClientTransport: HTTPTransport {
    private let client: AsyncHTTPClient.HTTPClient
    /// Which requests go through a proxy, and the client for each proxy (one pool per proxy).
    private let route: ProxyRoute
    private let proxied: [URL: AsyncHTTPClient.HTTPClient]
    private let ownsClient: Bool
    /// Whether the client decompresses bodies, so that their `Content-Encoding` no longer holds.
    private let decompresses: Bool
    private let isShutDown = Atomic<Bool>(false)
    /// Why the settings cannot make a working client (an unreadable CA file, say): every call fails
    /// with it, before anything is sent.
    private let setupError: TransportError?
    /// Follows a client certificate and key on disk, when they are configured.
    private let clientCertificate: ClientCertificateReloader?
    /// Whether 3xx answers are taken from the client before it can follow them: a caller's client
    /// may follow redirects itself, past the checks of ``RedirectMiddleware``.
    private let interceptsRedirects: Bool
    /// How refused connections are tried again (``APIConfig/HTTPSettings/connectRetryBudget``).
    private let connectRetry: ConnectRetry

    /// Creates a transport with its own client on the shared event loop group, set up from a
    /// configuration's HTTP settings.
    ///
    /// Values out of range are brought within it (at least one connection, times of at least a
    /// millisecond, a ratio of at least one): the ``API`` refuses such a configuration with
    /// ``APIError/Kind/invalidConfiguration`` before anything reaches the transport. A CA file or
    /// directory that cannot be read (``APIConfig/TLSSettings``) fails every call with that kind,
    /// naming the key and the path.
    ///
    /// - Parameter proxyAuthorization: The `Proxy-Authorization` value for the proxy, `Basic …` or
    ///   `Bearer …`, such as the storage's value for ``APIConfig/HTTPSettings/proxyCredentialService``
    ///   (``APIDependencies/live(environment:configDirectory:environmentVariables:authenticationStorage:storageFactories:sharedStateFactories:service:)``
    ///   looks it up).
    public convenience init(settings: APIConfig.HTTPSettings = APIConfig.HTTPSettings(), proxyAuthorization: String? = nil) {
        self.init(settings: settings, environment: TransportEnvironment.current(), proxyAuthorization: proxyAuthorization)
    }

    /// A transport for `settings`, reading `SSL_CERT_FILE`, `SSL_CERT_DIR` and the proxy variables
    /// from `environment`; a rotated client certificate is looked for at most once per
    /// `clientCertificateCheckInterval`, and a broken one logged to `logger`. Loopback targets go
    /// direct unless `proxiesLoopback`, which only tests of the proxy route set: their servers
    /// are all on this machine.
    package init(
        settings: APIConfig.HTTPSettings,
        environment: [String: String],
        proxyAuthorization: String? = nil,
        logger: Logger = Logger(label: "resourceful"),
        clientCertificateCheckInterval: Duration = .seconds(1),
        proxiesLoopback: Bool = false
    ) {
        var pool = AsyncHTTPClient.HTTPClient.Configuration.ConnectionPool(
            idleTimeout: .nanoseconds(max(settings.idleTimeout.nanoseconds, 1_000_000)),
            concurrentHTTP1ConnectionsPerHostSoftLimit: min(max(settings.maximumConnectionsPerHost, 1), 10_000)
        )
        // A refused or failed connection fails the attempt now instead of being tried again
        // until the deadline, which left the retry policy nothing to do.
        pool.retryConnectionEstablishment = false
        var configuration = AsyncHTTPClient.HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .nanoseconds(max(settings.connectTimeout.nanoseconds, 1_000_000))),
            connectionPool: pool
        )
        if settings.decompression {
            configuration.decompression = .enabled(limit: .ratio(max(settings.maxDecompressionRatio, 1)))
        }
        decompresses = settings.decompression
        connectRetry = ConnectRetry(budget: settings.connectRetryBudget)
        if settings.dangerouslyDisableCertificateVerification {
            logger.warning(
                "TLS certificate verification is disabled (http.dangerouslyDisableCertificateVerification): anyone on the path can read and change this transport's traffic, credentials included"
            )
        }
        configuration.httpVersion = settings.version == .http1 ? .http1Only : .automatic
        var problem: TransportError?
        var clientCertificate: ClientCertificateReloader?
        do {
            let tls = try TLSTrust.configuration(for: settings, environment: environment)
            configuration.tlsConfiguration = tls
            if let tls, settings.tls.clientCertificateFile != nil {
                clientCertificate = ClientCertificateReloader(
                    settings: settings, environment: environment, configuration: tls,
                    interval: clientCertificateCheckInterval, logger: logger
                )
            }
        } catch {
            problem = error
        }
        self.clientCertificate = clientCertificate
        interceptsRedirects = false
        // Spans and trace headers come from `TracingMiddleware`, one per call, named by path template.
        configuration.tracing.tracer = nil
        self.client = AsyncHTTPClient.HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        var route = ProxyRoute(settings.proxy, environment: environment)
        route.loopbackGoesDirect = !proxiesLoopback
        self.route = route
        var proxied: [URL: AsyncHTTPClient.HTTPClient] = [:]
        do throws(TransportError) {
            let authorization = try Self.proxyAuthorization(proxyAuthorization)
            for proxy in Set([route.https, route.http].compactMap { $0 }) {
                guard let host = proxy.host, !host.isEmpty, proxy.user == nil, proxy.password == nil, proxy.scheme?.lowercased() == "http" else {
                    // Not the URL itself: it may hold a password.
                    throw TransportError.invalidConfiguration(
                        "the proxy (http.proxy, https_proxy/HTTPS_PROXY or http_proxy) must be an http:// URL with a host and no user or password"
                    )
                }
                var proxyConfiguration = configuration
                proxyConfiguration.proxy = .server(host: host, port: proxy.port ?? 80, authorization: authorization)
                proxied[proxy] = AsyncHTTPClient.HTTPClient(eventLoopGroupProvider: .singleton, configuration: proxyConfiguration)
            }
        } catch {
            problem = problem ?? error
        }
        self.proxied = proxied
        // Settings it cannot use fail every call, as the one kind of error a transport throws.
        setupError = problem
        self.ownsClient = true
    }

    /// The proxy credential as AsyncHTTPClient takes it.
    private static func proxyAuthorization(_ value: String?) throws(TransportError) -> AsyncHTTPClient.HTTPClient.Authorization? {
        guard let value else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1)
        if parts.count == 2, HeaderValidation.isValidValue(value) {
            switch parts[0].lowercased() {
            case "basic": return .basic(credentials: String(parts[1]))
            case "bearer": return .bearer(tokens: String(parts[1]))
            default: break
            }
        }
        throw TransportError.invalidConfiguration("the proxy credential must be a Basic or Bearer Proxy-Authorization value")
    }

    /// Creates a transport with `settings`, runs `body` with it, and shuts it down however `body`
    /// ends, as AsyncHTTPClient's `HTTPClient.withHTTPClient` does for a client.
    public static func withTransport<T>(
        settings: APIConfig.HTTPSettings = APIConfig.HTTPSettings(),
        _ body: (AsyncHTTPClientTransport) async throws -> T
    ) async throws -> T {
        let transport = AsyncHTTPClientTransport(settings: settings)
        do {
            let result = try await body(transport)
            try await transport.shutdown()
            return result
        } catch {
            try? await transport.shutdown()
            throw error
        }
    }

    /// Creates a transport over a client the caller owns; ``shutdown()`` leaves it running.
    ///
    /// The client's own TLS, proxy and pool settings hold (a proxy set on it carries loopback
    /// targets too: give such a client no proxy, or use ``init(settings:proxyAuthorization:)``,
    /// whose proxy never carries them). Its redirect setting does not: a `3xx`
    /// with a `Location` is taken from the client before it can follow it and reaches the ``API``
    /// as a response, so the redirect rules of ``RedirectMiddleware`` (no `https` to `http`, no credential or body
    /// sent on to another origin) hold here too. The `3xx`'s own body is dropped.
    ///
    /// - Parameter decompresses: Whether `client` was configured with `decompression` enabled.
    public init(client: AsyncHTTPClient.HTTPClient, decompresses: Bool = false) {
        self.client = client
        self.route = ProxyRoute(.none, environment: [:])
        self.proxied = [:]
        self.ownsClient = false
        self.decompresses = decompresses
        self.connectRetry = ConnectRetry(budget: APIConfig.HTTPSettings().connectRetryBudget)
        self.setupError = nil
        self.clientCertificate = nil
        self.interceptsRedirects = true
    }

    deinit {
        // A transport dropped without `shutdown()` still releases its client instead of tripping
        // AsyncHTTPClient's "not shut down" check; the callback form does not block.
        if ownsClient, !isShutDown.load(ordering: .acquiring) {
            client.shutdown { _ in }
            for proxyClient in proxied.values { proxyClient.shutdown { _ in } }
        }
    }

    /// Sends `request` and collects the response body, up to the request's limit and deadline.
    ///
    /// The deadline is AsyncHTTPClient's own, which holds until the whole body is in, and task
    /// cancellation cancels the request: the call runs in the caller's task, with no task or timer
    /// of its own.
    public func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        if let setupError { throw setupError }
        guard !isShutDown.load(ordering: .acquiring) else { throw TransportError.connectionFailed(ShutDownError()) }
        let remaining = ContinuousClock.now.duration(to: request.deadline)
        guard remaining > .zero else { throw TransportError.timeout }
        guard request.streamsResponseBody || (0...Int(UInt32.max)).contains(request.maxResponseBytes) else {
            throw TransportError.invalidRequest("maxResponseBytes is outside 0 to 4 GiB − 1")
        }
        var headers = HTTPHeaders()
        headers.reserveCapacity(request.headerFields.count)
        for field in request.headerFields {
            headers.add(name: field.name.rawName, value: field.value)
        }
        let group = self.client.eventLoopGroup
        let body: AsyncHTTPClient.HTTPClient.Body? = request.body.map { body in
            if let bytes = body.bytes { return .byteBuffer(bytes) }
            return Self.streamed(body, on: group)
        }
        var outgoing: AsyncHTTPClient.HTTPClient.Request
        do {
            outgoing = try AsyncHTTPClient.HTTPClient.Request(
                url: request.url,
                method: HTTPMethod(rawValue: request.method.rawValue),
                headers: headers,
                body: body
            )
        } catch {
            throw TransportError.invalidRequest("the URL cannot be sent", underlying: error)
        }
        // New connections present the newest client certificate; open ones keep theirs.
        if let clientCertificate { outgoing.tlsConfiguration = await clientCertificate.configuration(deadline: request.deadline) }
        var client = self.client
        if !proxied.isEmpty, let url = URL(string: request.url), let proxy = route.proxy(for: url), let proxyClient = proxied[proxy] {
            client = proxyClient
        }
        // Written only for the error of a connection not made; an IPv6 address in brackets, as in a URL.
        let (host, port) = (outgoing.host, outgoing.port)
        return try await connectRetry.run(target: host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)", deadline: request.deadline) {
            [outgoing, client] in
            if request.streamsResponseBody {
                try await exchangeStreaming(outgoing, request: request, through: client)
            } else {
                try await exchange(outgoing, request: request, through: client)
            }
        }
    }

    /// A request body read from `body` as the connection takes it: each part is written once the
    /// previous one was, so a slow server makes the body be read more slowly.
    ///
    /// The body is read one part ahead, so that the body's end follows its last part at once. A
    /// server may still answer before AsyncHTTPClient learns that the body ended (it may answer
    /// before reading the body at all): such an answer is kept (``EarlyAnswer``).
    private static func streamed(_ body: TransportBody, on group: any EventLoopGroup) -> AsyncHTTPClient.HTTPClient.Body {
        .stream(contentLength: body.length.map(Int64.init)) { writer in
            let promise = group.any().makePromise(of: Void.self)
            Task {
                do {
                    var parts = body.makeAsyncIterator()
                    var current = try await parts.next()
                    while let part = current {
                        let next = try await parts.next()
                        if next == nil {
                            promise.completeWith(writer.write(.byteBuffer(part)))
                            return
                        }
                        try await writer.write(.byteBuffer(part)).get()
                        current = next
                    }
                    promise.succeed()
                } catch let error as TransportError {
                    promise.fail(error)
                } catch let error as HTTPClientError {
                    // The request ended under the body (an early answer, a closed connection):
                    // the exchange reports why.
                    promise.fail(error)
                } catch {
                    promise.fail(RequestBodyFailed(underlying: error))
                }
            }
            return promise.futureResult
        }
    }

    /// One exchange whose response body is handed over as it arrives (``TransportRequest/streamsResponseBody``).
    private func exchangeStreaming(
        _ outgoing: AsyncHTTPClient.HTTPClient.Request,
        request: TransportRequest,
        through client: AsyncHTTPClient.HTTPClient
    ) async throws -> TransportResponse {
        let remaining = ContinuousClock.now.duration(to: request.deadline)
        guard remaining > .zero else { throw TransportError.timeout }
        let delegate = StreamingDelegate(
            idleTimeout: request.idleTimeout,
            interceptsRedirects: interceptsRedirects,
            streamsBody: Self.streamsBody(request)
        )
        let task = client.execute(request: outgoing, delegate: delegate, deadline: .now() + .nanoseconds(remaining.nanoseconds))
        delegate.attach(task)
        let head: HTTPResponseHead
        do {
            head = try await withTaskCancellationHandler {
                try await delegate.head()
            } onCancel: {
                task.cancel()
            }
        } catch {
            if let redirect = delegate.interceptedRedirect {
                return TransportResponse(status: redirect.status, headerFields: redirect.headerFields, body: ByteBuffer())
            }
            throw failure(error, request: request, wroteHead: delegate.wroteHead, receivedHead: delegate.receivedHead, idleTimeout: request.idleTimeout)
        }
        let fields = receivedFields(head.headers)
        let idleTimeout = request.idleTimeout
        guard let streamed = delegate.takeBody() else { throw TransportError.invalidRequest("the response body was handed over twice") }
        let body = streamed.mapErrors { Self.translate($0, idleTimeout: idleTimeout) }
        var response = TransportResponse(
            status: HTTPResponse.Status(code: Int(head.status.code), reasonPhrase: head.status.reasonPhrase),
            headerFields: fields,
            body: TransportBody(stream: body, length: fields[.contentLength].flatMap { Int($0) })
        )
        response.httpVersion = Self.statusLineVersion(head.version)
        return response
    }

    /// What an exchange that failed before its response throws: ``ConnectRetry/NotSent`` when
    /// nothing of the request left, or the error as a ``TransportError``.
    private func failure(_ error: any Error, request: TransportRequest, wroteHead: Bool, receivedHead: Bool, idleTimeout: Duration?) -> any Error {
        // A body that can be read once, and was, cannot go out again on another connection.
        let mayResend = !(request.body?.wasRead ?? false)
        if mayResend, let reason = ConnectRetry.unsentReason(error) { return ConnectRetry.NotSent(reason: reason, cause: error) }
        if mayResend, !wroteHead, Self.isClosedConnection(error) { return ConnectRetry.NotSent(reason: .closed, cause: error) }
        let failure = Self.translate(error, idleTimeout: idleTimeout)
        if let failure = failure as? TransportError, failure.kind == .connectionFailed, !receivedHead, Self.isClosedConnection(error) {
            return TransportError.closedBeforeAnswer(error)
        }
        return failure
    }

    /// The response's header fields as `HTTPFields`, without those that described a body the
    /// client has decompressed.
    private func receivedFields(_ headers: HTTPHeaders) -> HTTPFields {
        var fields = HTTPFields()
        fields.reserveCapacity(headers.count)
        for (name, value) in headers {
            if let fieldName = HTTPField.Name.received(name) { fields.append(HTTPField(name: fieldName, value: value)) }
        }
        if decompresses, let encoding = fields[.contentEncoding]?.lowercased(), encoding == "gzip" || encoding == "deflate" {
            // The body was decompressed on its way in: these fields described the compressed one.
            fields[.contentEncoding] = nil
            fields[.contentLength] = nil
        }
        return fields
    }

    /// One exchange of `outgoing` through `client`; a connection refused, not answered within
    /// the connect time-out, or reset or closed before the request's head was written, is thrown
    /// as ``ConnectRetry/NotSent`` for ``ConnectRetry`` to try again.
    private func exchange(
        _ outgoing: AsyncHTTPClient.HTTPClient.Request,
        request: TransportRequest,
        through client: AsyncHTTPClient.HTTPClient
    ) async throws -> TransportResponse {
        let remaining = ContinuousClock.now.duration(to: request.deadline)
        guard remaining > .zero else { throw TransportError.timeout }
        let delegate = TrackingAccumulator(
            request: outgoing,
            maxBodySize: request.maxResponseBytes,
            interceptsRedirects: interceptsRedirects,
            streamsBody: Self.streamsBody(request)
        )
        let task = client.execute(
            request: outgoing,
            delegate: delegate,
            deadline: .now() + .nanoseconds(remaining.nanoseconds)
        )
        let response: AsyncHTTPClient.HTTPClient.Response
        do {
            response = try await withTaskCancellationHandler {
                try await task.futureResult.get()
            } onCancel: {
                task.cancel()
            }
        } catch {
            if let redirect = delegate.interceptedRedirect {
                return TransportResponse(status: redirect.status, headerFields: redirect.headerFields, body: ByteBuffer())
            }
            if let early = delegate.earlyAnswer(endedBy: error) {
                var answer = TransportResponse(
                    status: HTTPResponse.Status(code: Int(early.head.status.code), reasonPhrase: early.head.status.reasonPhrase),
                    headerFields: receivedFields(early.head.headers),
                    body: early.body
                )
                answer.httpVersion = Self.statusLineVersion(early.head.version)
                return answer
            }
            throw failure(error, request: request, wroteHead: delegate.wroteHead, receivedHead: delegate.receivedHead, idleTimeout: nil)
        }
        let fields = receivedFields(response.headers)
        var answer = TransportResponse(
            status: HTTPResponse.Status(code: Int(response.status.code), reasonPhrase: response.status.reasonPhrase),
            headerFields: fields,
            body: response.body ?? ByteBuffer()
        )
        answer.httpVersion = Self.statusLineVersion(response.version)
        return answer
    }

    /// Whether `request`'s body is sent as it is read (a file, a stream), so that an answer may
    /// come before it ends (``EarlyAnswer``).
    private static func streamsBody(_ request: TransportRequest) -> Bool {
        request.body.map { $0.bytes == nil } ?? false
    }

    /// `HTTP/1.1`, `HTTP/2`: the version as a status line writes it.
    static func statusLineVersion(_ version: HTTPVersion) -> String {
        version.major >= 2 && version.minor == 0 ? "HTTP/\(version.major)" : "HTTP/\(version.major).\(version.minor)"
    }

    /// Shuts the client down, if this transport created it; waits for its connections to close.
    public func shutdown() async throws {
        guard ownsClient, !isShutDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
        try await client.shutdown()
        for proxyClient in proxied.values { try await proxyClient.shutdown() }
    }

    private static func translate(_ error: any Error, idleTimeout: Duration? = nil) -> any Error {
        switch error {
        case let error as TransportError: error
        case is StreamingDelegate.IdleTimeout: TransportError.idle(idleTimeout ?? .zero)
        case let error as RequestBodyFailed:
            TransportError.invalidRequest("the request body's stream failed", underlying: error.underlying)
        case is NIOTooManyBytesError, is ResponseAccumulator.ResponseTooBigError: TransportError.responseTooLarge
        case let error as NIOHTTPDecompression.DecompressionError where error == .limit:
            TransportError(.responseTooLarge, underlying: error)
        case is NIOHTTPDecompression.DecompressionError, is NIOHTTPDecompression.ExtraDecompressionError:
            TransportError.undecodableBody(error)
        case _ where isTLSFailure(error): TransportError.tls(error)
        case let error as NIOConnectionError:
            // Every address of the host was tried: a TLS failure on any of them is the reason.
            if let failure = error.connectionErrors.lazy.map(\.error).first(where: isTLSFailure) {
                TransportError.tls(failure)
            } else if error.connectionErrors.isEmpty, error.dnsAError != nil || error.dnsAAAAError != nil {
                // No address to connect to: the name is what to check, not the connection.
                TransportError(.connectionFailed, underlying: error, detail: "the host name \(error.host) could not be resolved")
            } else {
                TransportError.connectionFailed(error)
            }
        case is CancellationError: TransportError.cancelled
        case let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout:
            TransportError(.timeout, underlying: error)
        case let error as HTTPClientError where error == .proxyAuthenticationRequired:
            TransportError.proxyAuthenticationRequired(error)
        case let error as HTTPClientError where error == .cancelled:
            TransportError(.cancelled, underlying: error)
        default: TransportError.connectionFailed(error)
        }
    }

    private static func isTLSFailure(_ error: any Error) -> Bool {
        error is NIOSSLError || error is NIOSSLExtraError || error is BoringSSLError
    }

    /// Whether `error` says the connection closed (or was reset) under the request.
    private static func isClosedConnection(_ error: any Error) -> Bool {
        switch error {
        case let error as HTTPClientError: error == .remoteConnectionClosed
        case let error as IOError: error.errnoCode == ECONNRESET || error.errnoCode == EPIPE
        case let error as ChannelError: error == .ioOnClosedChannel || error == .eof || error == .outputClosed
        // The server closed the connection before the handshake ended: no certificate was refused.
        case let error as NIOSSLError: error == .handshakeFailed(.sslError([.eofDuringHandshake])) || error == .uncleanShutdown
        default: false
        }
    }

    /// The request body's stream threw `underlying`.
    struct RequestBodyFailed: Error {
        var underlying: any Error
    }

    /// The transport was used after ``shutdown()``.
    struct ShutDownError: Error, CustomStringConvertible {
        var description: String { "the HTTP client has been shut down" }
    }
}
