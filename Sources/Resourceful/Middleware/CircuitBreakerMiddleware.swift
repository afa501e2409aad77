public import CoreMetrics
import Foundation
import HTTPTypes
import Logging

/// A circuit breaker per upstream: once too many calls to it fail (``CircuitBreakerPolicy``),
/// calls fail at once with ``APIError/Kind/circuitOpen`` — no connection, no wait, no retry —
/// until the policy's open interval has passed; then a bounded number of probe calls decide
/// whether it closes or opens again. A probe that hangs is bounded by its call's deadline, and a
/// cancelled one gives its place back, so a breaker never stays half-open.
///
/// Off unless configured (`limits.breaker.*`, or a policy given here): an ``API`` leaves the step
/// out of its chain when neither says how it opens. Each change of state is logged once, at
/// `warning` when it opens and `notice` when it closes, never a line per call, and counted in
/// metrics with the calls refused, labelled by service. The state sits in a
/// ``CircuitBreakerState``, this step's own in memory unless given one. In
/// ``API/defaultMiddlewares`` after the retries, before the rate budget: each attempt counts, and
/// a refused one takes no place in the budget.
public struct CircuitBreakerMiddleware: APIMiddleware, AnswersFromTheStepsAfter {
    /// Where the breakers are kept.
    public let state: any CircuitBreakerState
    /// A policy for every call through this step, in place of the configuration's; `nil` (the
    /// default) keeps the configuration's (`limits.breaker`).
    public var policy: CircuitBreakerPolicy?
    private let metrics: (any MetricsFactory)?
    /// ``state`` when it is in memory, asked without a suspension point.
    private let memory: InMemoryCircuitBreakerState?

    /// Whether no state was given: the ``API`` puts its dependencies' shared state in.
    let followsAPI: Bool

    /// A step keeping its breakers in `state` (when `nil`, the dependencies' shared state of the
    /// ``API`` it is given to, else its own in memory), with `policy` for every call when given,
    /// recording its metrics through `metrics` (else the bootstrapped `MetricsSystem`).
    public init(
        state: (any CircuitBreakerState)? = nil, policy: CircuitBreakerPolicy? = nil, metrics: (any MetricsFactory)? = nil
    ) {
        self.state = state ?? InMemoryCircuitBreakerState()
        memory = self.state as? InMemoryCircuitBreakerState
        followsAPI = state == nil
        self.policy = policy
        self.metrics = metrics
    }

    /// This step keeping its breakers in `shared` when it was given none.
    func sharing(_ shared: SharedState) -> CircuitBreakerMiddleware {
        guard followsAPI else { return self }
        return CircuitBreakerMiddleware(state: shared.circuitBreakers, policy: policy, metrics: metrics)
    }

    /// `body`, a call on ``state``, bounded by the call's deadline (``SharedState/callDeadline``):
    /// only the state's own calls see it, not the steps after. A state in memory is asked
    /// directly, without a suspension point.
    private func onState<T>(_ request: TransportRequest, _ body: () async -> T) async -> T {
        await SharedState.$callDeadline.withValue(request.deadline) { await body() }
    }

    /// This step, when it has a policy of its own or `config` gives one; `nil` when it would let
    /// every call through.
    func bound(to config: APIConfig) -> CircuitBreakerMiddleware? {
        policy != nil || config.limits.breaker != nil ? self : nil
    }

    /// Lets the request through while the upstream's breaker allows, and counts how it ended.
    public func intercept(
        _ request: TransportRequest,
        context: CallContext,
        next: (TransportRequest, CallContext) async throws -> TransportResponse
    ) async throws -> TransportResponse {
        guard let policy = policy ?? context.options.upstreamLimits.breaker else { return try await next(request, context) }
        let upstream = RateLimitMiddleware.upstreamKey(options: context.options, request: request)
        // A state in memory is asked directly: no suspension point, no task-local value.
        let permit =
            if let memory {
                memory.permitNow(upstream, policy: policy)
            } else {
                await onState(request) { await state.permit(upstream, policy: policy) }
            }
        if case .refused(let retryAfter, let failures, let calls) = permit {
            let service = context.options.service
            let when = retryAfter.map { "probes go in \(RateLimitMiddleware.seconds($0))" } ?? "its probes are out"
            let why = calls > 0 ? " after \(failures) of \(calls) calls failed" : ""
            LimitMetrics.count("resourceful.breaker.refused", service: service, factory: metrics)
            // The origin as compared (no user information an app's step or a redirect may have written).
            let origin = RateLimitMiddleware.origin(of: request.target.origin)
            throw APIError(kind: .circuitOpen, detail: "the circuit of \(service) at \(origin) is open\(why): \(when)")
        }
        let response: TransportResponse
        // The clock is read only for a policy that counts slow calls.
        let started = policy.slowCallDuration == nil ? nil : ContinuousClock.now
        let outcome: CircuitBreakerOutcome
        do {
            response = try await next(request, context)
            if policy.failureStatuses.contains(Int(response.status.code)) {
                outcome = .failure
            } else if let started, let slow = policy.slowCallDuration, ContinuousClock.now - started > slow {
                outcome = .slow
            } else {
                outcome = .success
            }
        } catch {
            await record(Self.outcome(of: error), of: permit, upstream: upstream, policy: policy, request: request, context: context)
            throw error
        }
        // A state in memory counts without a suspension point, as it permitted.
        if let memory {
            if let transition = memory.recordNow(outcome, of: permit, for: upstream, policy: policy) {
                report(transition, upstream: upstream, policy: policy, context: context)
            }
        } else {
            await record(outcome, of: permit, upstream: upstream, policy: policy, request: request, context: context)
        }
        return response
    }

    /// Counts `outcome`, and logs the change of state it made.
    private func record(
        _ outcome: CircuitBreakerOutcome, of permit: CircuitBreakerPermit, upstream: String, policy: CircuitBreakerPolicy,
        request: TransportRequest, context: CallContext
    ) async {
        let transition =
            if let memory {
                memory.recordNow(outcome, of: permit, for: upstream, policy: policy)
            } else {
                await onState(request) { await state.record(outcome, of: permit, for: upstream, policy: policy) }
            }
        guard let transition else { return }
        report(transition, upstream: upstream, policy: policy, context: context)
    }

    /// Logs and counts a change of state: once per change, never per call.
    private func report(_ transition: CircuitBreakerTransition, upstream: String, policy: CircuitBreakerPolicy, context: CallContext) {
        let opened = if case .opened = transition { true } else { false }
        LimitMetrics.count(
            "resourceful.breaker.transitions", service: context.options.service, extra: [("state", opened ? "open" : "closed")], factory: metrics
        )
        var metadata: Logger.Metadata = ["resourceful.request-id": .string(context.requestID), "resourceful.upstream": .string(upstream)]
        switch transition {
        case .opened(let failures, let calls):
            metadata["resourceful.failures"] = .stringConvertible(failures)
            metadata["resourceful.calls"] = .stringConvertible(calls)
            metadata["resourceful.open-ms"] = .stringConvertible(policy.openInterval.nanoseconds / 1_000_000)
            context.logger.warning("Circuit opened", metadata: metadata)
        case .closed:
            context.logger.notice("Circuit closed", metadata: metadata)
        }
    }

    /// How an error of the steps after this one counts: a connection failure or time-out is the
    /// upstream's; a cancellation, or anything refused before it was sent, says nothing of it.
    private static func outcome(of error: any Error) -> CircuitBreakerOutcome {
        guard let failure = error as? APIError else { return .abandoned }
        switch failure.kind {
        case .transport, .timeout: return .failure
        default: return .abandoned
        }
    }
}
