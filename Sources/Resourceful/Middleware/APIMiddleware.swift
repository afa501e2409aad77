public import Logging

/// A step around the transport: sees each request on its way out and each response on its way back.
///
/// An ``API`` runs its middlewares in order, the first outermost, with the ``HTTPClient`` innermost.
/// A middleware may change the request, retry `next`, replace the response, or throw.
///
/// ```swift
/// struct RequireJSON: APIMiddleware {
///     func intercept(
///         _ request: TransportRequest, context: CallContext,
///         next: (TransportRequest, CallContext) async throws -> TransportResponse
///     ) async throws -> TransportResponse {
///         let response = try await next(request, context)
///         guard response.headerFields[.contentType]?.hasPrefix("application/json") ?? true else {
///             throw MyError.notJSON
///         }
///         return response
///     }
/// }
/// ```
public protocol APIMiddleware: Sendable {
    /// Handles `request`, calling `next` to pass it on.
    func intercept(
        _ request: TransportRequest,
        context: CallContext,
        next: (TransportRequest, CallContext) async throws -> TransportResponse
    ) async throws -> TransportResponse
}

/// What a middleware knows about the call it is part of.
public struct CallContext: Sendable {
    /// An identifier for this call, also in its log lines as `resourceful.request-id`.
    public var requestID: String
    /// The request's verb.
    public var verb: ResourceVerb
    /// The request's path, percent-encoded, without the query.
    public var path: String
    /// The path with its interpolated values replaced by `{}`, a label of bounded cardinality.
    public var pathTemplate: String
    /// The query string, percent-encoded, without `?`; empty when there is none.
    public var query: String
    /// Whether the request body must stay out of logs.
    public var shouldRedactRequestBody: Bool
    /// Whether the response body must stay out of logs.
    public var shouldRedactResponseBody: Bool
    /// The logger of the call.
    public var logger: Logger
    /// The configuration of the ``API``.
    public var config: APIConfig
    /// Whether failed attempts may be tried again (see ``ResourceRequest/allowsRetries``).
    public var allowsRetries: Bool
    /// The retry policy of this call.
    public var retryPolicy: APIConfig.RetryPolicy
    /// Which attempt this is, from 1; set by ``RetryMiddleware``.
    public var attempt: Int

    /// Creates a context.
    public init(
        requestID: String,
        verb: ResourceVerb,
        path: String,
        pathTemplate: String,
        query: String = "",
        shouldRedactRequestBody: Bool = false,
        shouldRedactResponseBody: Bool = false,
        logger: Logger,
        config: APIConfig,
        allowsRetries: Bool = true,
        retryPolicy: APIConfig.RetryPolicy? = nil,
        attempt: Int = 1
    ) {
        self.requestID = requestID
        self.verb = verb
        self.path = path
        self.pathTemplate = pathTemplate
        self.query = query
        self.shouldRedactRequestBody = shouldRedactRequestBody
        self.shouldRedactResponseBody = shouldRedactResponseBody
        self.logger = logger
        self.config = config
        self.allowsRetries = allowsRetries
        self.retryPolicy = retryPolicy ?? config.retry
        self.attempt = attempt
    }
}
