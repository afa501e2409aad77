public import Logging

/// What a middleware knows about the call it is part of.
///
/// Its fields describe the call and are set by the ``API`` (and the retry step's ``attempt``); a
/// middleware reads them, and may change ``options`` and ``logger`` for the steps after it. A
/// value type whose fields live in one shared, immutable box: passing a context through the
/// middlewares costs one reference count, not one per field, and changing a field gives this
/// copy a box of its own.
public struct CallContext: Sendable {
    private struct Fields: Sendable {
        var requestID: String
        var verb: ResourceVerb
        var path: String
        var pathTemplate: String
        var query: String
        var options: RequestOptions
        var logger: Logger
        var attempt: Int
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
    /// How the call is made: time-out, retries, redaction, coders… (``RequestOptions``).
    public var options: RequestOptions {
        get { box.fields.options }
        set { fields.options = newValue }
    }
    /// The logger of the call.
    public var logger: Logger {
        get { box.fields.logger }
        set { fields.logger = newValue }
    }
    /// Which attempt this is, from 1; set by the retry step.
    public package(set) var attempt: Int {
        get { box.fields.attempt }
        set { fields.attempt = newValue }
    }

    /// Creates a context.
    package init(
        requestID: String,
        verb: ResourceVerb,
        path: String,
        pathTemplate: String,
        query: String = "",
        options: RequestOptions,
        logger: Logger,
        attempt: Int = 1
    ) {
        box = Box(
            Fields(
                requestID: requestID,
                verb: verb,
                path: path,
                pathTemplate: pathTemplate,
                query: query,
                options: options,
                logger: logger,
                attempt: attempt
            )
        )
    }
}
