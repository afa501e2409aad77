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
        /// at once without queueing (AsyncHTTPClient's own default, 8, queued 32 concurrent calls:
        /// they took 1.24 times as long as with 64 in `make bench`).
        public var maximumConnectionsPerHost: Int
        /// How long opening a connection may take.
        public var connectTimeout: Duration
        /// How many redirects one call follows; `0` returns a `3xx` as it is.
        public var maxRedirects: Int
        /// Accept any TLS certificate. Only for talking to a local test server: it lets anyone on
        /// the path read and change the traffic, credentials included.
        public var dangerouslyDisableCertificateVerification: Bool

        /// Creates settings.
        public init(
            maximumConnectionsPerHost: Int = 64,
            connectTimeout: Duration = .seconds(10),
            maxRedirects: Int = 5,
            dangerouslyDisableCertificateVerification: Bool = false
        ) {
            self.maximumConnectionsPerHost = maximumConnectionsPerHost
            self.connectTimeout = connectTimeout
            self.maxRedirects = maxRedirects
            self.dangerouslyDisableCertificateVerification = dangerouslyDisableCertificateVerification
        }
    }
}
