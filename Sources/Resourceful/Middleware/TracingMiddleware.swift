import HTTPTypes
public import Tracing

/// Wraps each call in a client span of swift-distributed-tracing and propagates its context in the
/// outgoing header fields, through whatever tracer the app bootstrapped (none: nothing is recorded
/// or sent).
///
/// The span is named `<METHOD> <path template>` (such as `GET users/{}`), so the number of span
/// names stays bounded, and carries `http.request.method`, `url.template`, `resourceful.verb` and
/// `http.response.status_code` attributes. The tracer decides the header form: with swift-otel it
/// is W3C Trace Context (`traceparent`, `tracestate`).
///
/// The span's name is the step's option: keep its cardinality bounded (a template, not a path):
///
/// ```swift
/// TracingMiddleware(spanName: { request, context in "billing \(context.pathTemplate)" })
/// ```
public struct TracingMiddleware: APIMiddleware, AnswersFromTheStepsAfter {
    /// Names a call's span.
    public typealias SpanName = @Sendable (TransportRequest, CallContext) -> String

    private let tracer: (any Tracer)?
    private let spanName: SpanName?

    /// Traces through `tracer`, or through the bootstrapped `InstrumentationSystem` when `nil`;
    /// names spans with `spanName`, or `<METHOD> <path template>` when `nil`.
    public init(tracer: (any Tracer)? = nil, spanName: SpanName? = nil) {
        self.tracer = tracer
        self.spanName = spanName
    }

    /// Starts a span, injects its context into `request`, passes it on and ends the span.
    public func intercept(
        _ request: TransportRequest,
        context: CallContext,
        next: (TransportRequest, CallContext) async throws -> TransportResponse
    ) async throws -> TransportResponse {
        let tracer: any Tracer
        if let own = self.tracer {
            tracer = own
        } else {
            // Nothing bootstrapped: no span to name, no context to bind. Checked on the instrument
            // itself first, a plain type check: `InstrumentationSystem.tracer` searches for a
            // tracer through a protocol cast on every call.
            if InstrumentationSystem.instrument is NoOpInstrument { return try await next(request, context) }
            tracer = InstrumentationSystem.tracer
        }
        if tracer is NoOpTracer { return try await next(request, context) }
        let span = tracer.startSpan(
            spanName?(request, context) ?? "\(request.method.rawValue) \(context.pathTemplate)",
            context: InstrumentationContext.current ?? .topLevel,
            ofKind: .client
        )
        span.attributes["http.request.method"] = request.method.rawValue
        span.attributes["url.template"] = context.pathTemplate
        span.attributes["resourceful.verb"] = context.verb.rawValue
        var request = request
        tracer.inject(span.context, into: &request.headerFields, using: HTTPFieldsInjector())
        let response: TransportResponse
        do {
            response = try await InstrumentationContext.withValue(span.context) {
                try await next(request, context)
            }
        } catch {
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
            span.end()
            throw error
        }
        span.attributes["http.response.status_code"] = response.status.code
        if response.status.kind == .serverError || response.status.kind == .clientError {
            span.setStatus(SpanStatus(code: .error))
        }
        guard response.body.bytes == nil else {
            span.end()
            return response
        }
        // A streamed body: the span lasts until its last byte, or the error that broke it.
        var observed = response
        observed.body = response.body.observingEnd { end in
            span.attributes["http.response.body.size"] = end.bytes
            if let error = end.error {
                span.recordError(error)
                span.setStatus(SpanStatus(code: .error))
            }
            span.end()
        }
        return observed
    }
}

struct HTTPFieldsInjector: Injector {
    func inject(_ value: String, forKey key: String, into fields: inout HTTPFields) {
        guard let name = HTTPField.Name(key), HeaderValidation.isValidValue(value) else { return }
        fields[name] = value
    }
}
