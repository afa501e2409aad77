public import CoreMetrics
import HTTPTypes

/// Counts calls and times them with swift-metrics, through whatever metrics backend the app
/// bootstrapped (none: nothing is recorded, and the step costs one type check).
///
/// - `resourceful.requests` (counter) and `resourceful.request.duration` (timer, nanoseconds), with
///   the dimensions `verb`, `method`, `path` (the path *template*, such as `users/{}`, so the
///   number of series stays bounded) and `outcome` (the status code, or the ``APIError/Kind`` of a
///   call that got no response, such as `timeout`).
///
/// The labels are the step's options: `MetricsMiddleware(requestsLabel: "billing.calls")`.
public struct MetricsMiddleware: APIMiddleware {
    /// The default label of the call counter.
    package static let defaultRequestsLabel = "resourceful.requests"
    /// The default label of the call timer.
    package static let defaultDurationLabel = "resourceful.request.duration"

    /// The label of the call counter.
    public var requestsLabel: String
    /// The label of the call timer.
    public var durationLabel: String
    private let factory: (any MetricsFactory)?

    /// Records through `factory`, or through the bootstrapped `MetricsSystem` when `nil`, under
    /// the given labels.
    public init(
        requestsLabel: String = "resourceful.requests",
        durationLabel: String = "resourceful.request.duration",
        factory: (any MetricsFactory)? = nil
    ) {
        self.requestsLabel = requestsLabel
        self.durationLabel = durationLabel
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
        let outcome: String
        defer {
            let dimensions = [
                ("verb", context.verb.rawValue), ("method", request.method.rawValue),
                ("path", context.pathTemplate), ("outcome", outcome),
            ]
            Counter(label: requestsLabel, dimensions: dimensions, factory: factory).increment()
            Timer(label: durationLabel, dimensions: dimensions, factory: factory).recordInterval(since: start)
        }
        do {
            let response = try await next(request, context)
            outcome = String(response.status.code)
            return response
        } catch {
            outcome = APIError.kindName(of: error)
            throw error
        }
    }
}

extension Timer {
    fileprivate func recordInterval(since start: ContinuousClock.Instant) {
        recordNanoseconds((ContinuousClock.now - start).nanoseconds)
    }
}
