public import Foundation

extension APIConfig {
    /// When and how a failed attempt is tried again. See <doc:Reliability>.
    public struct RetryPolicy: Sendable, Equatable {
        /// Attempts in all, the first included; `1` never retries.
        public var maxAttempts: Int
        /// The backoff before the second attempt; each later one doubles it, up to ``maxDelay``.
        /// The wait is drawn at random between zero and that bound ("full jitter").
        public var baseDelay: Duration
        /// The longest backoff drawn between attempts (a `Retry-After` may ask for longer).
        public var maxDelay: Duration
        /// The statuses that are tried again.
        public var retryableStatuses: Set<Int>

        /// Creates a policy; by default three attempts, 100 ms doubling up to 5 s, on 429, 502,
        /// 503 and 504 and on connection failures.
        public init(
            maxAttempts: Int = 3,
            baseDelay: Duration = .milliseconds(100),
            maxDelay: Duration = .seconds(5),
            retryableStatuses: Set<Int> = [429, 502, 503, 504]
        ) {
            self.maxAttempts = maxAttempts
            self.baseDelay = baseDelay
            self.maxDelay = maxDelay
            self.retryableStatuses = retryableStatuses
        }

        /// One attempt, no retries.
        public static let never = RetryPolicy(maxAttempts: 1)
    }

    /// Settings of the live HTTP client.
    public struct HTTPSettings: Sendable, Equatable {
        /// How many HTTP/1.1 connections may be open to one host at once; calls beyond it wait
        /// for a connection. The default, 64, lets a server make that many calls to one upstream
        /// at once without queueing (AsyncHTTPClient's own default is 8; see <doc:Performance>).
        public var maximumConnectionsPerHost: Int
        /// How long an unused pooled connection stays open (`http.idleTimeout`).
        public var idleTimeout: Duration
        /// How long opening one connection may take (`http.connectTimeout`). A refused connection
        /// ends at once whatever this says; a connection refused or not answered in time is tried
        /// again within ``connectRetryBudget``.
        public var connectTimeout: Duration
        /// How long a request keeps trying to connect while the server refuses its connections
        /// (`http.connectRetryBudget`, default 2 seconds; `0` tries once), as during a restart or
        /// a deploy. A refused connection sent nothing, and neither did one reset or closed before
        /// the request's head was written to it, or one not answered within ``connectTimeout``, so
        /// it is tried again for every method, `POST` included, apart from ``APIConfig/retry``:
        /// waits from 25 ms doubling to 250 ms, jittered, never past the call's deadline. When the
        /// budget is spent the attempt fails with ``APIError/Kind/transport``, naming the
        /// `host:port` and what happened to its connections, and is not tried again by the retry
        /// policy (after a connect time-out, which may spend the budget in one attempt, it may be).
        public var connectRetryBudget: Duration
        /// How many redirects one call follows; `0` returns a `3xx` as it is.
        public var maxRedirects: Int
        /// Header fields dropped before a redirect to another origin, besides the ones that
        /// ``APIConfig/LogSettings/alwaysMaskedNames`` and the masked headers name (the
        /// `http.redirects.sensitiveHeaders` key), such as `X-Tenant`.
        public var sensitiveRedirectHeaders: [String]
        /// Whether compressed responses are asked for (`Accept-Encoding: deflate, gzip`) and
        /// decompressed. Servers may compress even when not asked; with this off such a body fails
        /// with ``APIError/Kind/unsupportedContentEncoding`` rather than reach the decoder.
        public var decompression: Bool
        /// The most a compressed body may grow when decompressed, as a multiple of its compressed
        /// size; a body that grows more (a decompression bomb) fails with
        /// ``APIError/Kind/responseTooLarge``. ``APIConfig/maxResponseBytes`` caps the
        /// decompressed size as well.
        public var maxDecompressionRatio: Int
        /// Which HTTP versions are spoken (`http.version`).
        public var version: HTTPVersionChoice
        /// Which proxy requests go through (`http.proxy`).
        public var proxy: ProxySetting
        /// The credential storage's service whose value is sent as `Proxy-Authorization` to the
        /// proxy (`http.proxyCredentialService`), such as `Basic dXNlcjpwYXNz`; never taken from a
        /// proxy URL.
        public var proxyCredentialService: String?
        /// Which certificates are trusted (`http.tls.*`).
        public var tls: TLSSettings
        /// Accept any TLS certificate. Only for talking to a local test server: it lets anyone on
        /// the path read and change the traffic, credentials included. A private CA is trusted
        /// through ``tls`` instead.
        public var dangerouslyDisableCertificateVerification: Bool

        /// Creates settings.
        public init(
            maximumConnectionsPerHost: Int = 64,
            idleTimeout: Duration = .seconds(60),
            connectTimeout: Duration = .seconds(10),
            maxRedirects: Int = 5,
            sensitiveRedirectHeaders: [String] = [],
            decompression: Bool = true,
            maxDecompressionRatio: Int = 200,
            version: HTTPVersionChoice = .automatic,
            proxy: ProxySetting = .environment,
            proxyCredentialService: String? = nil,
            tls: TLSSettings = TLSSettings(),
            dangerouslyDisableCertificateVerification: Bool = false,
            connectRetryBudget: Duration = .seconds(2)
        ) {
            self.connectRetryBudget = connectRetryBudget
            self.version = version
            self.proxy = proxy
            self.proxyCredentialService = proxyCredentialService
            self.tls = tls
            self.decompression = decompression
            self.maxDecompressionRatio = maxDecompressionRatio
            self.maximumConnectionsPerHost = maximumConnectionsPerHost
            self.idleTimeout = idleTimeout
            self.connectTimeout = connectTimeout
            self.maxRedirects = maxRedirects
            self.sensitiveRedirectHeaders = sensitiveRedirectHeaders
            self.dangerouslyDisableCertificateVerification = dangerouslyDisableCertificateVerification
        }
    }

    /// Which HTTP versions the live client speaks.
    public enum HTTPVersionChoice: String, Sendable, Equatable, CaseIterable {
        /// HTTP/2 where the server offers it over TLS (ALPN), else HTTP/1.1: concurrent calls to
        /// one HTTP/2 server share one connection.
        case automatic
        /// HTTP/1.1 only.
        case http1
    }

    /// Which proxy the live client's requests go through.
    public enum ProxySetting: Sendable, Equatable {
        /// Always direct.
        case none
        /// `https_proxy` (else `HTTPS_PROXY`) for `https` targets and `http_proxy` for `http` ones
        /// (`HTTP_PROXY` is never read), except the targets `no_proxy` (else `NO_PROXY`) names, as
        /// curl reads them. The default.
        case environment
        /// This HTTP proxy for every target but those `NO_PROXY` names.
        case url(URL)
    }
}
