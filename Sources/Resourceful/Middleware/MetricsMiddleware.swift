public import CoreMetrics
import HTTPTypes
import NIOCore

/// Counts calls and times them with swift-metrics, through whatever metrics backend the app
/// bootstrapped (none: nothing is recorded, and the step costs one type check).
///
/// - `resourceful.requests` (counter) and `resourceful.request.duration` (timer, nanoseconds), with
///   the dimensions `verb`, `method`, `path` (the path *template*, such as `users/{}`, so the
///   number of series stays bounded) and `outcome` (the status code, or the ``APIError/Kind`` of a
///   call that got no response, such as `timeout`);
/// - `resourceful.response.bytes` (counter): the body bytes received, same dimensions.
///
/// A streamed body (``API/stream(_:)``, downloads, events, lines) is one call until its end: it
/// is counted, timed and sized when its last byte is read, or with the kind of error that broke
/// it (`cancelled` when the reader stopped early).
///
/// The labels are the step's options: `MetricsMiddleware(requestsLabel: "billing.calls")`.
public struct MetricsMiddleware: APIMiddleware, AnswersFromTheStepsAfter {
    /// The default label of the call counter.
    package static let defaultRequestsLabel = "resourceful.requests"
    /// The default label of the call timer.
    package static let defaultDurationLabel = "resourceful.request.duration"

    /// The label of the call counter.
    public var requestsLabel: String
    /// The label of the call timer.
    public var durationLabel: String
    /// The label of the counter of body bytes received.
    public var bytesLabel: String
    private let factory: (any MetricsFactory)?

    /// Records through `factory`, or through the bootstrapped `MetricsSystem` when `nil`, under
    /// the given labels.
    public init(
        requestsLabel: String = "resourceful.requests",
        durationLabel: String = "resourceful.request.duration",
        bytesLabel: String = "resourceful.response.bytes",
        factory: (any MetricsFactory)? = nil
    ) {
        self.requestsLabel = requestsLabel
        self.durationLabel = durationLabel
        self.bytesLabel = bytesLabel
        self.factory = factory
    }

    /// Passes the request on and records its outcome and duration.
    public func intercept(
        _ request: TransportRequest,
        context: CallContext,
        next: (TransportRequest, CallContext) async throws -> TransportResponse
    ) async throws -> TransportResponse {
        let factory = factory ?? MetricsSystem.factory
        // Nothing bootstrapped: no handles to make, nothing to record.
        if factory is NOOPMetricsHandler { return try await next(request, context) }
        let start = ContinuousClock.now
        let (requestsLabel, durationLabel, bytesLabel) = (self.requestsLabel, self.durationLabel, self.bytesLabel)
        let baseDimensions = [("verb", context.verb.rawValue), ("method", request.method.rawValue), ("path", context.pathTemplate)]
        let record: @Sendable (String, Int?) -> Void = { outcome, bytes in
            let dimensions = baseDimensions + [("outcome", outcome)]
            Counter(label: requestsLabel, dimensions: dimensions, factory: factory).increment()
            Timer(label: durationLabel, dimensions: dimensions, factory: factory).recordInterval(since: start)
            if let bytes { Counter(label: bytesLabel, dimensions: dimensions, factory: factory).increment(by: bytes) }
        }
        let response: TransportResponse
        do {
            response = try await next(request, context)
        } catch {
            record(APIError.kindName(of: error), nil)
            throw error
        }
        let status = String(response.status.code)
        if let bytes = response.body.bytes {
            record(status, bytes.readableBytes)
            return response
        }
        // A stream is one call until its last byte: counted, timed and sized when it ends.
        let deadline = request.deadline
        var observed = response
        observed.body = response.body.observingEnd { end in
            record(end.error.map { APIError.classifying($0, deadline: deadline).kind.description } ?? status, end.bytes)
        }
        return observed
    }
}

extension Timer {
    fileprivate func recordInterval(since start: ContinuousClock.Instant) {
        recordNanoseconds((ContinuousClock.now - start).nanoseconds)
    }
}
