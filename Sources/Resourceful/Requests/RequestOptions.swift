import Foundation
public import HTTPTypes

/// How one call is made: every per-request setting in one value, with its default in one place.
///
/// An ``API`` makes its defaults once, from its configuration and dependencies; each call starts
/// from them and applies its request's own settings (its redaction switches,
/// ``ResourceRequest/shouldRedactRequestBody``…, the deprecated one-property overrides, and last
/// ``ResourceRequest/configure(_:)``, where a request writes its settings). The middlewares read the result from
/// ``CallContext/options``; a middleware may change it for the steps after it, and each setting
/// holds from there on: ``timeout`` and ``streamTimeout`` move the request's
/// ``TransportRequest/deadline`` (counted from the start of the call) and idle time-out,
/// ``maxResponseBytes`` caps the body the transport collects, and the redaction switches decide
/// what the logging step, a recording transport and the steps after it show. Settings used before
/// the middlewares run (the credential's field, the encoder, the body encoding) or after the
/// answer is collected (the decoder) are the call's own.
///
/// ```swift
/// struct ExportReport: ResourceRequest {
///     typealias ResourceType = Report
///     let verb = ResourceVerb.show
///     let path: ResourcePath = "reports/latest"
///     func configure(_ options: inout RequestOptions) {
///         options.timeout = .seconds(120)
///         options.maxResponseBytes = 64 * 1024 * 1024
///     }
/// }
/// ```
public struct RequestOptions: Sendable {
    /// The time the whole call may take, credential lookup, attempts and waits included
    /// (``APIConfig/timeout``; ``ResourceRequest/timeout``).
    public var timeout: Duration
    /// The largest response body accepted (``APIConfig/maxResponseBytes``) when it is collected;
    /// for a stream (``API/stream(_:)``, events, lines), the longest event or line. A download to
    /// a file is bounded by ``DownloadOptions/maxBytes`` and the destination's free space.
    public var maxResponseBytes: Int
    /// For a streamed call (``API/stream(_:)``, ``API/download(_:to:progress:)``,
    /// ``API/events(_:reconnect:)``, ``API/lines(_:)``): the most time the whole stream may take;
    /// `nil`, the default, for no limit. ``timeout`` then bounds the wait for the response head
    /// and each silence of the server between parts of the body.
    public var streamTimeout: Duration?
    /// Whether failed attempts may be tried again once the request may have reached the server
    /// (``ResourceRequest/allowsRetries``): the attempts of ``RetryMiddleware``, the
    /// reconnections of an event stream and the resumptions of a download.
    ///
    /// Unless the request or a step sets it, it follows the method the request is sent with:
    /// `true` for an idempotent one (`GET`, `PUT`, `DELETE`), and for a `POST` or `PATCH` only
    /// when the request carries its own `Idempotency-Key`. It reads ``updateMethod`` as it is
    /// now, so that a `PATCH` chosen in ``ResourceRequest/configure(_:)`` is not retried
    /// without a key. Setting it (`true` or `false`) is a choice that holds whatever the method.
    public var allowsRetries: Bool {
        get { retryChoice ?? defaultAllowsRetries }
        set { retryChoice = newValue }
    }
    /// ``allowsRetries`` as the request or a step set it; `nil` while it follows the method.
    private var retryChoice: Bool?
    /// What the default of ``allowsRetries`` is decided from: the request's verb and whether its
    /// own header fields carry an `Idempotency-Key`; `nil` before a request is applied.
    private var retryBasis: RetryBasis?

    /// The request facts the default of ``allowsRetries`` reads.
    private struct RetryBasis: Sendable {
        var verb: ResourceVerb
        var carriesKey: Bool
    }

    /// The default of ``allowsRetries``: whether the method the request is sent with is
    /// idempotent, or the request carries its own `Idempotency-Key`.
    private var defaultAllowsRetries: Bool {
        guard let retryBasis else { return true }
        return retryBasis.verb.method(update: updateMethod).isIdempotent || retryBasis.carriesKey
    }

    /// Whether `request` may be sent again once the server may have received it: as the request
    /// or a step chose (``allowsRetries`` set), else when its method is idempotent or it carries
    /// an `Idempotency-Key` (its own, or one a step before added). Read by the steps that send a
    /// request again, so that the method actually sent decides.
    package func allowsRetries(of request: TransportRequest) -> Bool {
        retryChoice ?? (request.method.isIdempotent || request.headerFields[.idempotencyKey] != nil)
    }
    /// When and how often failed attempts are tried again (``APIConfig/retry``;
    /// ``ResourceRequest/retryPolicy``).
    public var retryPolicy: APIConfig.RetryPolicy
    /// Whether the request body is kept out of logs, recordings and cURL exports
    /// (``ResourceRequest/shouldRedactRequestBody``).
    public var shouldRedactRequestBody: Bool
    /// Whether the response body is kept out of logs and recordings
    /// (``ResourceRequest/shouldRedactResponseBody``).
    public var shouldRedactResponseBody: Bool
    /// Whether a `307`/`308` redirect to another origin may re-send the body
    /// (``ResourceRequest/sendsBodyAcrossOrigins``).
    public var sendsBodyAcrossOrigins: Bool
    /// `PUT` or `PATCH` for ``ResourceVerb/update`` (``ResourceRequest/updateMethod``).
    public var updateMethod: UpdateMethod
    /// How a body is encoded (``ResourceRequest/bodyEncoding``).
    public var bodyEncoding: BodyEncoding
    /// How arrays are written in the query string or a form body
    /// (``APIConfig/Coding-swift.struct/arrayFormat``; ``ResourceRequest/arrayFormat``).
    public var arrayFormat: ArrayFormat
    /// Encodes a JSON body (the injected encoder; ``ResourceRequest/requestEncoder``).
    public var requestEncoder: any RequestEncoder
    /// Decodes the response (the injected decoder; ``ResourceRequest/responseDecoder``).
    public var responseDecoder: any ResponseDecoder
    /// The service the credential is looked up for (``APIConfig/service``). Fixed per ``API``, as
    /// the fields below it: they decide which credential is sent and what counts as a secret.
    public var service: String { fixed.service }
    /// The header field the credential goes in
    /// (``APIConfig/AuthenticationSettings/headerName``; `Authorization` by default).
    public var credentialField: HTTPField.Name { fixed.credentialField }
    /// The most redirects followed (``APIConfig/HTTPSettings/maxRedirects``); `0` returns a
    /// redirect as it is.
    public var maxRedirects: Int
    /// Header fields dropped before a redirect to another origin, beside the masked ones
    /// (``APIConfig/HTTPSettings/sensitiveRedirectHeaders``).
    public var sensitiveRedirectHeaders: [String] { fixed.sensitiveRedirectHeaders }
    /// Whether answers to credentialed requests may be stored without saying so themselves
    /// (``APIConfig/CacheSettings/storesAuthorizedResponses``).
    public var storesAuthorizedResponses: Bool
    /// What is masked wherever the call is shown: log lines, error descriptions, the cache's keys,
    /// cURL exports (``APIConfig/redaction``, the credential's field among the masked headers).
    public var redaction: APIConfig.LogSettings { fixed.redaction }
    /// The masking rules of ``redaction``, made once.
    package var redactor: Redactor { fixed.redactor }
    /// The upstream's rate budget and longest pause (``APIConfig/limits``), fixed per ``API``.
    package var upstreamLimits: APIConfig.UpstreamLimits { fixed.upstreamLimits }
    /// The name of the upstream a request to `origin` (as its target writes it) goes to, made once
    /// for the configured origin, where most calls go; `nil` for another origin.
    package func upstreamKey(toward origin: String) -> String? {
        origin == fixed.baseOrigin ? fixed.baseUpstream : nil
    }

    /// What an ``API`` fixes for all its calls, made once and shared by every call's options:
    /// copying the options then copies one reference.
    private final class Fixed: Sendable {
        let service: String
        let credentialField: HTTPField.Name
        let sensitiveRedirectHeaders: [String]
        let redaction: APIConfig.LogSettings
        let redactor: Redactor
        /// Header names dropped before another origin beyond what ``redactor`` masks.
        let redirectOnlySecrets: SensitiveNames
        /// The names of the configured base header fields, lower-cased.
        let baseHeaderNames: Set<String>
        let upstreamLimits: APIConfig.UpstreamLimits
        /// The configured origin as a request's target writes it, and the name of its upstream.
        let baseOrigin: String
        let baseUpstream: String

        init(config: APIConfig) {
            upstreamLimits = config.limits
            baseOrigin = RequestTarget(parsing: config.baseURL.absoluteString).origin
            baseUpstream = RateLimitMiddleware.upstreamKey(service: config.service, origin: baseOrigin)
            service = config.service
            credentialField = config.credentialField
            sensitiveRedirectHeaders = config.http.sensitiveRedirectHeaders
            redaction = config.redaction
            redactor = Redactor(settings: redaction)
            redirectOnlySecrets = SensitiveNames(extra: sensitiveRedirectHeaders + [credentialField.canonicalName])
            baseHeaderNames = Set(config.baseHeaders.keys.map { $0.lowercased() })
        }
    }

    private let fixed: Fixed

    /// The options of a call under `config`, with `requestEncoder` and `responseDecoder`: what a
    /// call starts from before its request's own settings.
    package init(config: APIConfig, requestEncoder: any RequestEncoder, responseDecoder: any ResponseDecoder) {
        timeout = config.timeout
        maxResponseBytes = config.maxResponseBytes
        streamTimeout = nil
        retryChoice = nil
        retryBasis = nil
        retryPolicy = config.retry
        shouldRedactRequestBody = false
        shouldRedactResponseBody = false
        sendsBodyAcrossOrigins = false
        updateMethod = .put
        bodyEncoding = .json
        arrayFormat = config.coding.arrayFormat
        self.requestEncoder = requestEncoder
        self.responseDecoder = responseDecoder
        storesAuthorizedResponses = config.cache.storesAuthorizedResponses
        maxRedirects = config.http.maxRedirects
        fixed = Fixed(config: config)
    }

    /// The header fields a request sent to another origin than its call's may not carry: every
    /// one whose name the redaction rules mask (``redactor``, the rule the logs follow, so that
    /// the two stay one), the credential's field, ``sensitiveRedirectHeaders`` and every
    /// configured base header (``APIConfig/baseHeaders``, which belong to the API's origin
    /// whatever their names).
    package var crossOriginSecrets: CrossOriginSecrets {
        CrossOriginSecrets(redactor: fixed.redactor, extra: fixed.redirectOnlySecrets, baseHeaders: fixed.baseHeaderNames)
    }

    /// Whether a header field may not go to another origin than its call's
    /// (``crossOriginSecrets``).
    package struct CrossOriginSecrets: Sendable {
        let redactor: Redactor
        let extra: SensitiveNames
        let baseHeaders: Set<String>

        /// Whether the field named `name` is dropped before another origin.
        package func contains(_ name: String) -> Bool {
            redactor.masksHeader(name) || extra.contains(name) || (!baseHeaders.isEmpty && baseHeaders.contains(name.lowercased()))
        }
    }

    /// The settings a ``TransportRequest`` carries for the transport and the steps that read it
    /// there (deadline, idle time-out, byte cap, redaction switches), as these options say.
    package var transportSettings: TransportSettings {
        TransportSettings(
            timeout: timeout,
            streamTimeout: streamTimeout,
            maxResponseBytes: maxResponseBytes,
            redactsRequestBody: shouldRedactRequestBody,
            redactsResponseBody: shouldRedactResponseBody
        )
    }

    /// The options a ``TransportRequest`` carries (``transportSettings``), compared to tell whether
    /// a middleware changed any of them.
    package struct TransportSettings: Sendable, Equatable {
        var timeout: Duration
        var streamTimeout: Duration?
        var maxResponseBytes: Int
        var redactsRequestBody: Bool
        var redactsResponseBody: Bool
    }

    /// These options with `request`'s own settings applied, ``ResourceRequest/configure(_:)`` last.
    package func applying<Request: ResourceRequest>(_ request: Request) -> RequestOptions {
        var options = self
        // The request's own choice holds; its default is decided again from the final method,
        // after `configure` (which may pick `PATCH`).
        options.retryChoice = (RequestOverrides.self as any ReadsRequestOverrides.Type).apply(request, to: &options)
        options.retryBasis = RetryBasis(
            verb: request.verb,
            carriesKey: request.headers.keys.contains { $0.lowercased() == "idempotency-key" }
        )
        options.shouldRedactRequestBody = request.shouldRedactRequestBody
        options.shouldRedactResponseBody = request.shouldRedactResponseBody
        request.configure(&options)
        return options
    }
}

extension TransportRequest {
    /// Writes `settings` into this request, those that differ from `previous` (all of them when
    /// it is `nil`): the one place a call's options become its request's deadline, idle
    /// time-out, byte cap and redaction switches, before the middlewares and again after any of
    /// them changes ``CallContext/options``.
    ///
    /// ``RequestOptions/timeout`` counts from `start`, the start of the call: it is the deadline
    /// of a collected call and the idle time-out of a streamed one (``streamsResponseBody``),
    /// whose deadline ``RequestOptions/streamTimeout`` sets, unless the stream was given one of
    /// its own (a download's, over all its connections). A field a middleware set itself stays as
    /// it set it until the option behind it changes.
    package mutating func apply(
        _ settings: RequestOptions.TransportSettings,
        since previous: RequestOptions.TransportSettings?,
        start: ContinuousClock.Instant
    ) {
        if settings.timeout != previous?.timeout {
            if streamsResponseBody {
                idleTimeout = settings.timeout
            } else {
                deadline = start + settings.timeout
            }
        }
        if streamsResponseBody, let previous, settings.streamTimeout != previous.streamTimeout,
            deadline == API.streamDeadline(from: start, streamTimeout: previous.streamTimeout)
        {
            deadline = API.streamDeadline(from: start, streamTimeout: settings.streamTimeout)
        }
        if settings.maxResponseBytes != previous?.maxResponseBytes { maxResponseBytes = settings.maxResponseBytes }
        if settings.redactsRequestBody != previous?.redactsRequestBody { shouldRedactRequestBody = settings.redactsRequestBody }
        if settings.redactsResponseBody != previous?.redactsResponseBody { shouldRedactResponseBody = settings.redactsResponseBody }
    }
}

/// Applies a request's own overrides, the requirements ``ResourceRequest/configure(_:)`` replaces,
/// and returns its choice on retries (`nil` when it keeps the default). Called through this
/// protocol, whose requirement is not deprecated, so that reading them is not diagnosed.
private protocol ReadsRequestOverrides {
    static func apply<Request: ResourceRequest>(_ request: Request, to options: inout RequestOptions) -> Bool?
}

private enum RequestOverrides: ReadsRequestOverrides {
    @available(*, deprecated, message: "reads the overrides configure(_:) replaces")
    static func apply<Request: ResourceRequest>(_ request: Request, to options: inout RequestOptions) -> Bool? {
        if let timeout = request.timeout { options.timeout = timeout }
        let defaultUsed = Locked(false)
        let allowsRetries = RetryDefault.$probe.withValue(defaultUsed) { request.allowsRetries }
        if let policy = request.retryPolicy { options.retryPolicy = policy }
        options.sendsBodyAcrossOrigins = request.sendsBodyAcrossOrigins
        options.updateMethod = request.updateMethod
        options.bodyEncoding = request.bodyEncoding
        if let format = request.arrayFormat { options.arrayFormat = format }
        if let encoder = request.requestEncoder { options.requestEncoder = encoder }
        if let decoder = request.responseDecoder { options.responseDecoder = decoder }
        return defaultUsed.value ? nil : allowsRetries
    }
}
