public import Foundation
public import Logging

/// What an ``API`` needs to know about the service it calls.
///
/// Build one in code (tests do), or load it from `Configs/<environment>.json` with environment
/// variables overriding the file: ``load(environment:configDirectory:environmentVariables:service:)``.
/// Every key is listed in <doc:Configuration>.
public struct APIConfig: Sendable, Equatable {
    /// The URL every request path is resolved against, such as `https://api.example.com/v1`.
    public var baseURL: URL
    /// The name the ``AuthenticationStorage`` is asked for when a request needs credentials.
    public var service: String
    /// Header fields sent with every request; a request's own ``ResourceRequest/headers`` win.
    /// They belong to the API's origin: none is sent on after a redirect to another origin.
    public var baseHeaders: [String: String]
    /// Query items sent with every request, such as `api-version` or `key`, first in the query
    /// string; an item of the same name in a request's ``ResourceRequest/query`` or query
    /// parameters replaces one of these. Values named by the masking rules
    /// (``LogSettings``) are masked in logs and recordings like any other.
    public var baseQueryItems: [String: String]
    /// How long one call may take, from building the request to decoding the response.
    public var timeout: Duration
    /// The largest response body accepted; a larger one fails with ``APIError/Kind/responseTooLarge``
    /// without being held in memory.
    public var maxResponseBytes: Int
    /// How JSON keys and dates are written and read.
    public var coding: Coding
    /// What the logging step writes.
    public var logging: LogSettings
    /// When failed attempts are tried again.
    public var retry: RetryPolicy
    /// Settings of the live HTTP client.
    public var http: HTTPSettings
    /// Where the live dependencies get credentials.
    public var authentication: AuthenticationSettings
    /// What ``HTTPCacheMiddleware`` may store.
    public var cache: CacheSettings
    /// How much the upstream is sent (``RateLimitMiddleware``).
    public var limits: UpstreamLimits
    /// Where the limits' state lives: in memory, or a store a fleet shares (`sharedState.*`).
    public var sharedState: SharedStateSettings

    /// Creates a configuration; every value but the base URL and service has a default.
    public init(
        baseURL: URL,
        service: String,
        baseHeaders: [String: String] = [:],
        baseQueryItems: [String: String] = [:],
        timeout: Duration = .seconds(30),
        maxResponseBytes: Int = 10 * 1024 * 1024,
        coding: Coding = Coding(),
        logging: LogSettings = LogSettings(),
        retry: RetryPolicy = RetryPolicy(),
        http: HTTPSettings = HTTPSettings(),
        authentication: AuthenticationSettings = AuthenticationSettings(),
        cache: CacheSettings = CacheSettings(),
        limits: UpstreamLimits = UpstreamLimits(),
        sharedState: SharedStateSettings = SharedStateSettings()
    ) {
        self.baseURL = baseURL
        self.service = service
        self.baseHeaders = baseHeaders
        self.baseQueryItems = baseQueryItems
        self.timeout = timeout
        self.maxResponseBytes = maxResponseBytes
        self.coding = coding
        self.logging = logging
        self.retry = retry
        self.http = http
        self.authentication = authentication
        self.cache = cache
        self.limits = limits
        self.sharedState = sharedState
    }

    /// What ``HTTPCacheMiddleware`` may store (`cache.*` keys).
    public struct CacheSettings: Sendable, Equatable {
        /// Whether answers to credentialed requests (`Authorization`, a cookie, an API-key field or
        /// query item: whatever the redaction rules mask) may be stored when they do not say
        /// `public`, `must-revalidate` or `s-maxage` themselves (`cache.storesAuthorizedResponses`,
        /// default `false`). Either way an answer is kept for the credential that got it and
        /// served to that credential only.
        public var storesAuthorizedResponses: Bool

        /// Creates cache settings.
        public init(storesAuthorizedResponses: Bool = false) {
            self.storesAuthorizedResponses = storesAuthorizedResponses
        }
    }

    /// How JSON keys and dates are written and read, by the live coders, query strings and forms.
    public struct Coding: Sendable, Equatable {
        /// How property names become JSON keys and query names.
        public var keyStrategy: KeyStrategy
        /// How dates are written and read.
        public var dateStrategy: DateStrategy
        /// Which JSON decoder reads response bodies.
        public var decoder: DecoderChoice
        /// How arrays are written in query strings and form bodies; a request can choose its own.
        public var arrayFormat: ArrayFormat

        /// Creates coding settings: default keys, ISO 8601 dates, the fast decoder and bracketed
        /// arrays unless told otherwise.
        public init(
            keyStrategy: KeyStrategy = .useDefaultKeys,
            dateStrategy: DateStrategy = .iso8601,
            decoder: DecoderChoice = .fast,
            arrayFormat: ArrayFormat = .brackets
        ) {
            self.keyStrategy = keyStrategy
            self.dateStrategy = dateStrategy
            self.decoder = decoder
            self.arrayFormat = arrayFormat
        }
    }

    /// Which JSON decoder the live dependencies read response bodies with.
    public enum DecoderChoice: String, Sendable, Equatable, CaseIterable {
        /// ``FastJSONDecoder``: the results and errors of `JSONDecoder`, several times faster.
        case fast
        /// Foundation's `JSONDecoder`.
        case foundation
    }

    /// How property names become keys.
    public enum KeyStrategy: String, Sendable, Equatable, CaseIterable {
        /// Names as they are in the Swift type.
        case useDefaultKeys
        /// `camelCase` names sent as `snake_case`, and read back from it.
        case snakeCase
    }

    /// How dates are written and read.
    public enum DateStrategy: String, Sendable, Equatable, CaseIterable {
        /// ISO 8601 text, such as `2024-05-01T12:00:00Z`.
        case iso8601
        /// Seconds since 1970-01-01 as a number.
        case secondsSince1970
        /// Milliseconds since 1970-01-01 as a number.
        case millisecondsSince1970
        /// `Date`'s own `Codable` form: seconds since 2001-01-01.
        case deferredToDate
    }

    /// What the logging step writes, and what it masks.
    public struct LogSettings: Sendable, Equatable {
        /// The level of the live logger: `trace`, `debug`, `info`, `notice`, `warning`, `error` or
        /// `critical`. Request and response lines are written at `debug`.
        public var level: Logger.Level
        /// Names whose values are masked whatever the configuration says, in header fields (of
        /// requests and responses), JSON bodies (at any depth), query strings and forms.
        ///
        /// Names are compared without case, `_`, `-`, `.` or spaces, and a name ending in one of
        /// these is masked too: `token` covers `access_token`, `refreshToken`, `X-Auth-Token` and
        /// `X-Subject-Token`; `apiKey` covers `api_key` and `X-Api-Key`; `secret` covers
        /// `clientSecret`; `secretKey`, `accessKey` and `signingKey` cover `secret_key`,
        /// `aws_secret_access_key` and `X-Signing-Key`; `jwt`, `pwd`, `passcode`, `assertion` and
        /// `codeVerifier` are masked too. `key`, `sig`, `otp`, `pin`, `pass` and `auth` are masked
        /// when they are the whole name (as suffixes they would hide `sortKey` or `bypass`), or
        /// the last word of one (`db_pass`, `stripe_key`, `X-Auth`; not `sort_key`, `publicKey`).
        public static let alwaysMaskedNames: [String] = SensitiveNames.builtIn

        /// Header fields masked in logs and dropped before a redirect to another origin, besides
        /// ``alwaysMaskedNames``, such as `X-Tenant-Secret-Id`. Matched by the same rule.
        public var maskedHeaders: [String]
        /// JSON body fields (at any depth), query and form fields masked in logs besides
        /// ``alwaysMaskedNames``, such as `pan` or `ssn`. Matched by the same rule.
        public var maskedBodyKeys: [String]
        /// The most bytes of a body written to one log line; the rest is cut.
        public var maxBodyBytes: Int

        /// Creates log settings.
        public init(
            level: Logger.Level = .info,
            maskedHeaders: [String] = [],
            maskedBodyKeys: [String] = [],
            maxBodyBytes: Int = 4096
        ) {
            self.level = level
            self.maskedHeaders = maskedHeaders
            self.maskedBodyKeys = maskedBodyKeys
            self.maxBodyBytes = maxBodyBytes
        }

        /// The built-in names with the configured headers and keys.
        var sensitiveNames: SensitiveNames {
            SensitiveNames(extra: maskedHeaders + maskedBodyKeys)
        }
    }
}
