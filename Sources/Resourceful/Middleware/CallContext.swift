public import Logging

/// What a middleware knows about the call it is part of.
///
/// Its fields describe the call and are set by the ``API`` (and the retry step's ``attempt``);
/// a middleware reads them, and may change only ``logger``. A value type whose fields live in one
/// shared, immutable box: passing a context through the
/// middlewares costs one reference count, not one per field (the configuration alone holds dozens),
/// and changing a field gives this copy a box of its own.
public struct CallContext: Sendable {
    private struct Fields: Sendable {
        var requestID: String
        var verb: ResourceVerb
        var path: String
        var pathTemplate: String
        var query: String
        var shouldRedactRequestBody: Bool
        var shouldRedactResponseBody: Bool
        var logger: Logger
        var config: APIConfig
        var allowsRetries: Bool
        var retryPolicy: APIConfig.RetryPolicy
        var attempt: Int
        var sendsBodyAcrossOrigins: Bool
    }

    private final class Box: Sendable {
        let fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    private var box: Box

    private var fields: Fields {
        get { box.fields }
        set { box = Box(newValue) }
    }

    /// An identifier for this call, also in its log lines as `resourceful.request-id`.
    public package(set) var requestID: String {
        get { box.fields.requestID }
        set { fields.requestID = newValue }
    }
    /// The request's verb.
    public package(set) var verb: ResourceVerb {
        get { box.fields.verb }
        set { fields.verb = newValue }
    }
    /// The request's path, percent-encoded, without the query.
    public package(set) var path: String {
        get { box.fields.path }
        set { fields.path = newValue }
    }
    /// The path with its interpolated values replaced by `{}`, a label of bounded cardinality.
    public package(set) var pathTemplate: String {
        get { box.fields.pathTemplate }
        set { fields.pathTemplate = newValue }
    }
    /// The query string, percent-encoded, without `?`; empty when there is none.
    public package(set) var query: String {
        get { box.fields.query }
        set { fields.query = newValue }
    }
    /// Whether the request body must stay out of logs.
    public package(set) var shouldRedactRequestBody: Bool {
        get { box.fields.shouldRedactRequestBody }
        set { fields.shouldRedactRequestBody = newValue }
    }
    /// Whether the response body must stay out of logs.
    public package(set) var shouldRedactResponseBody: Bool {
        get { box.fields.shouldRedactResponseBody }
        set { fields.shouldRedactResponseBody = newValue }
    }
    /// The logger of the call.
    public var logger: Logger {
        get { box.fields.logger }
        set { fields.logger = newValue }
    }
    /// The configuration of the ``API``.
    public package(set) var config: APIConfig {
        get { box.fields.config }
        set { fields.config = newValue }
    }
    /// Whether failed attempts may be tried again (see ``ResourceRequest/allowsRetries``).
    package var allowsRetries: Bool {
        get { box.fields.allowsRetries }
        set { fields.allowsRetries = newValue }
    }
    /// The retry policy of this call.
    package var retryPolicy: APIConfig.RetryPolicy {
        get { box.fields.retryPolicy }
        set { fields.retryPolicy = newValue }
    }
    /// Which attempt this is, from 1; set by the retry step.
    public package(set) var attempt: Int {
        get { box.fields.attempt }
        set { fields.attempt = newValue }
    }
    /// Whether a redirect to another origin may re-send the body (see
    /// ``ResourceRequest/sendsBodyAcrossOrigins``).
    package var sendsBodyAcrossOrigins: Bool {
        get { box.fields.sendsBodyAcrossOrigins }
        set { fields.sendsBodyAcrossOrigins = newValue }
    }

    /// Creates a context.
    package init(
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
        attempt: Int = 1,
        sendsBodyAcrossOrigins: Bool = false
    ) {
        box = Box(
            Fields(
                requestID: requestID,
                verb: verb,
                path: path,
                pathTemplate: pathTemplate,
                query: query,
                shouldRedactRequestBody: shouldRedactRequestBody,
                shouldRedactResponseBody: shouldRedactResponseBody,
                logger: logger,
                config: config,
                allowsRetries: allowsRetries,
                retryPolicy: retryPolicy ?? config.retry,
                attempt: attempt,
                sendsBodyAcrossOrigins: sendsBodyAcrossOrigins
            )
        )
    }
}
