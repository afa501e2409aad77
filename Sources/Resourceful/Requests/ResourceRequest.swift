/// One REST endpoint: a verb, a path, typed parameters and a typed result.
///
/// ```swift
/// struct ShowUser: ResourceRequest {
///     typealias ResourceType = User
///     let verb = ResourceVerb.show
///     let path: ResourcePath
///     let parameters = Empty()
///     init(id: Int) { path = "users/\(id)" }
/// }
/// let user = try await api.call(ShowUser(id: 42))
/// ```
///
/// Parameters go to the query string for ``ResourceVerb/show``, ``ResourceVerb/index`` and
/// ``ResourceVerb/delete`` (see <doc:QueryStrings>), and to the body for ``ResourceVerb/create`` and
/// ``ResourceVerb/update``, encoded as ``bodyEncoding`` says (JSON by default, through the injected
/// encoder). ``query`` goes to the query string for every verb, beside a body: `POST
/// /v1/charges?expand[]=customer`. Every other requirement has a default.
public protocol ResourceRequest: Sendable {
    /// What a successful response decodes to; use ``Empty`` for `204 No Content` or an empty body.
    associatedtype ResourceType: Decodable & Sendable
    /// What the request sends; use ``Empty`` for nothing.
    associatedtype Parameters: Encodable & Sendable = Empty
    /// What an error response (any status outside 200–299) decodes to, carried by
    /// ``APIError/errorResponse(as:)``. ``Empty`` (the default) means the body is not decoded.
    associatedtype ErrorResponse: Decodable & Sendable = Empty
    /// What the request sends in its query string whatever its verb; ``Empty`` (the default) for
    /// nothing beyond ``parameters``.
    associatedtype Query: Encodable & Sendable = Empty

    /// What the request does to the resource.
    var verb: ResourceVerb { get }
    /// Where the resource is, relative to the configured base URL.
    var path: ResourcePath { get }
    /// The values to send.
    var parameters: Parameters { get }
    /// Query items for any verb, encoded by the rules and ``arrayFormat`` of query parameters and
    /// written after them. They follow the configured ``APIConfig/baseQueryItems``; an item named
    /// like a base one replaces it.
    var query: Query { get }
    /// Extra header fields for this request, added after the configured base headers (a field of
    /// the same name replaces the base one). Values holding CR or LF are refused before sending.
    var headers: [String: String] { get }
    /// `PUT` (the default) or `PATCH`, for ``ResourceVerb/update`` requests.
    @available(*, deprecated, message: "set it in configure(_:): options.updateMethod = .patch")
    var updateMethod: UpdateMethod { get }
    /// How a body is encoded, for ``ResourceVerb/create`` and ``ResourceVerb/update``.
    @available(*, deprecated, message: "set it in configure(_:): options.bodyEncoding = .formURLEncoded")
    var bodyEncoding: BodyEncoding { get }
    /// This request's own time limit, replacing the configured ``APIConfig/timeout``; `nil` keeps it.
    @available(*, deprecated, message: "set it in configure(_:): options.timeout = .seconds(5)")
    var timeout: Duration? { get }
    /// An encoder for this request alone, replacing the injected one for JSON bodies.
    @available(*, deprecated, message: "set it in configure(_:): options.requestEncoder = encoder")
    var requestEncoder: (any RequestEncoder)? { get }
    /// A decoder for this request alone, replacing the injected one.
    @available(*, deprecated, message: "set it in configure(_:): options.responseDecoder = decoder")
    var responseDecoder: (any ResponseDecoder)? { get }
    /// Whether failed attempts may be tried again once the request may have reached the server:
    /// by default `true` when its method is idempotent (`GET`, `PUT`, `DELETE`), and for a `POST`
    /// (``ResourceVerb/create``) or a `PATCH` only when ``headers`` carry an `Idempotency-Key`.
    /// The default is decided by the method the request is finally sent with, a `PATCH` chosen
    /// in ``configure(_:)`` (``RequestOptions/updateMethod``) included. A `POST` or `PATCH` that
    /// opts in (this property, or ``RequestOptions/allowsRetries`` set in ``configure(_:)``)
    /// without a key of its own is sent with one `Idempotency-Key` across its attempts, the
    /// reconnections of its event stream and the resumptions of its download. A connection
    /// refused before anything was sent is tried again whatever this says.
    @available(*, deprecated, message: "set it in configure(_:): options.allowsRetries = false")
    var allowsRetries: Bool { get }
    /// This request's own retry policy, replacing ``APIConfig/retry``; `nil` keeps it.
    @available(*, deprecated, message: "set it in configure(_:): options.retryPolicy = policy")
    var retryPolicy: APIConfig.RetryPolicy? { get }
    /// When `true`, this request's body is never written to any log line (logins, tokens).
    var shouldRedactRequestBody: Bool { get }
    /// When `true`, this request's response body is never written to any log line.
    var shouldRedactResponseBody: Bool { get }
    /// Whether a `307` or `308` redirect to another origin may re-send this request's body there.
    /// `false` by default: such a redirect fails the call with ``APIError/Kind/redirectRefused``
    /// instead of sending a body (a password, say) to a host the request did not name. Credential
    /// headers are dropped before another origin either way.
    @available(*, deprecated, message: "set it in configure(_:): options.sendsBodyAcrossOrigins = true")
    var sendsBodyAcrossOrigins: Bool { get }
    /// How arrays are written in this request's query string or form body, replacing
    /// ``APIConfig/Coding-swift.struct/arrayFormat``; `nil` keeps it. See <doc:QueryStrings>.
    @available(*, deprecated, message: "set it in configure(_:): options.arrayFormat = .brackets")
    var arrayFormat: ArrayFormat? { get }
    /// Sets this request's own ``RequestOptions``: its time-out, method for an update, body
    /// encoding, array format, coders, retries, redirects, limits. Called last, after the
    /// configuration's options and the deprecated one-property overrides above are applied. Does
    /// nothing by default.
    ///
    /// ```swift
    /// struct RenameUser: ResourceRequest {
    ///     // …
    ///     func configure(_ options: inout RequestOptions) {
    ///         options.updateMethod = .patch
    ///         options.timeout = .seconds(5)
    ///     }
    /// }
    /// ```
    func configure(_ options: inout RequestOptions)
}

extension ResourceRequest {
    /// No extra header fields.
    public var headers: [String: String] { [:] }
    /// `PUT`.
    @available(*, deprecated, message: "set it in configure(_:): options.updateMethod = .patch")
    public var updateMethod: UpdateMethod { .put }
    /// JSON.
    @available(*, deprecated, message: "set it in configure(_:): options.bodyEncoding = .formURLEncoded")
    public var bodyEncoding: BodyEncoding { .json }
    /// The configured time limit.
    @available(*, deprecated, message: "set it in configure(_:): options.timeout = .seconds(5)")
    public var timeout: Duration? { nil }
    /// The injected encoder.
    @available(*, deprecated, message: "set it in configure(_:): options.requestEncoder = encoder")
    public var requestEncoder: (any RequestEncoder)? { nil }
    /// The injected decoder.
    @available(*, deprecated, message: "set it in configure(_:): options.responseDecoder = decoder")
    public var responseDecoder: (any ResponseDecoder)? { nil }
    /// `true` when the request's method is idempotent; for a `POST` or `PATCH`, whose side effect
    /// a retry could repeat, only when ``headers`` carry an `Idempotency-Key`. A call decides it
    /// again from the method it finally sends (``RequestOptions/allowsRetries``), so that a
    /// `PATCH` chosen in ``configure(_:)`` counts as one.
    @available(*, deprecated, message: "set it in configure(_:): options.allowsRetries = false")
    public var allowsRetries: Bool {
        // Tells the call applying this request that the default answered, not a choice of its own.
        RetryDefault.probe?.withLock { $0 = true }
        return verb.method(update: updateMethod).isIdempotent || headers.keys.contains { $0.lowercased() == "idempotency-key" }
    }
    /// The configured policy.
    @available(*, deprecated, message: "set it in configure(_:): options.retryPolicy = policy")
    public var retryPolicy: APIConfig.RetryPolicy? { nil }
    /// `false`: the body is logged (masked, capped) at debug level.
    public var shouldRedactRequestBody: Bool { false }
    /// `false`: the response body is logged (masked, capped) at debug level.
    public var shouldRedactResponseBody: Bool { false }
    /// `false`: a body is never re-sent to another origin.
    @available(*, deprecated, message: "set it in configure(_:): options.sendsBodyAcrossOrigins = true")
    public var sendsBodyAcrossOrigins: Bool { false }
    /// The configured format.
    @available(*, deprecated, message: "set it in configure(_:): options.arrayFormat = .brackets")
    public var arrayFormat: ArrayFormat? { nil }
    /// Leaves the options as the API and the requirements above made them.
    public func configure(_ options: inout RequestOptions) {}
}

extension ResourceRequest where Parameters == Empty {
    /// No parameters.
    public var parameters: Empty { Empty() }
}

extension ResourceRequest where Query == Empty {
    /// No query beyond the parameters.
    public var query: Empty { Empty() }
}

/// How ``RequestOptions/applying(_:)`` tells whether a request kept the default
/// ``ResourceRequest/allowsRetries`` (decided again from the final method) or chose its own.
enum RetryDefault {
    /// Set by the default implementation while it is read inside ``RequestOptions/applying(_:)``.
    @TaskLocal static var probe: Locked<Bool>?
}
