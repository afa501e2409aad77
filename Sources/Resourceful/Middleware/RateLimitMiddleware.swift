public import CoreMetrics
import Foundation
import HTTPTypes
import Logging

/// Keeps each upstream's rate budget and pauses: a call waits (first come, first served) for its
/// place, or fails at once with ``APIError/Kind/rateLimited`` when its place comes after its
/// deadline — without sending anything.
///
/// An upstream is a configured service at the origin it calls. Its budget is the configuration's
/// (`limits.rate.requestsPerSecond`, `limits.rate.burst`), or the one it says it takes in its
/// `RateLimit-Policy` field, whichever is tighter; a learned budget holds for its window (at most
/// ``APIConfig/UpstreamLimits/maxPause``) unless the upstream says it again, and never spaces
/// calls further apart than that longest pause. Without either, this step only keeps pauses:
/// a `429` or `503` with `Retry-After`, or a limit the upstream says is spent (`RateLimit`,
/// `RateLimit-Remaining`/`-Reset`, `x-ratelimit-remaining`/`-reset`,
/// `x-ratelimit-remaining-requests`/`-reset-requests` and `-tokens`), stops every call to that
/// upstream until then, not only the one that was refused — each such pause cut to
/// ``APIConfig/UpstreamLimits/maxPause`` and logged once, at `notice`. Fields of a response
/// served from the HTTP cache or reached through a redirect, and malformed ones, are ignored.
/// Waits, refusals and pauses are counted in metrics, labelled by service.
///
/// A waiting call costs no thread; cancelling it gives its place back at once. The state sits
/// in a ``RateLimitState``: a step made without one keeps the state of the ``API`` it is given to
/// — the dependencies' shared state (``APIDependencies/sharedState``) when they hold one, else its
/// own in memory, so that an ``API`` (and its copies, such as ``API/with(logger:)``'s) keeps one
/// budget per upstream; give several ``API`` values one state to share their budgets, or a state
/// shared by a fleet to keep one budget for all its instances. In ``API/defaultMiddlewares``,
/// after the retries, so that each attempt takes its own place.
public struct RateLimitMiddleware: APIMiddleware, AnswersFromTheStepsAfter {
    /// Where the budgets and pauses are kept.
    public let state: any RateLimitState
    /// A budget for every call through this step, in place of the configuration's; `nil` (the
    /// default) keeps the configuration's.
    public var budget: RateBudget?
    private let metrics: (any MetricsFactory)?
    /// ``state`` when it is in memory, asked without a suspension point.
    private let memory: InMemoryRateLimitState?

    /// Whether no state was given: the ``API`` puts its dependencies' shared state in.
    let followsAPI: Bool

    /// A step keeping its budgets in `state` (when `nil`, the dependencies' shared state of the
    /// ``API`` it is given to, else its own in memory), with `budget` for every call when given,
    /// recording its metrics through `metrics` (else the bootstrapped `MetricsSystem`).
    public init(state: (any RateLimitState)? = nil, budget: RateBudget? = nil, metrics: (any MetricsFactory)? = nil) {
        self.state = state ?? InMemoryRateLimitState()
        memory = self.state as? InMemoryRateLimitState
        followsAPI = state == nil
        self.budget = budget
        self.metrics = metrics
    }

    /// This step keeping its state in `shared` when it was given none.
    func sharing(_ shared: SharedState) -> RateLimitMiddleware {
        guard followsAPI else { return self }
        return RateLimitMiddleware(state: shared.rateLimits, budget: budget, metrics: metrics)
    }

    /// `body`, a call on ``state``, bounded by the call's deadline (``SharedState/callDeadline``)
    /// when the state is not in memory: only the state's own calls see it, not the steps after.
    private func onState<T>(_ request: TransportRequest, _ body: () async -> T) async -> T {
        guard memory == nil else { return await body() }
        return await SharedState.$callDeadline.withValue(request.deadline) { await body() }
    }

    /// The name of the upstream `request` goes to for the service of `options`: the service and
    /// the origin. The configured origin's is made once per ``API``; another's once per service
    /// and origin as written (``knownUpstreams``), so that a call to a known upstream costs a
    /// lookup, not a URL's parse.
    package static func upstreamKey(options: RequestOptions, request: TransportRequest) -> String {
        if let key = options.upstreamKey(toward: request.target.origin) { return key }
        let service = options.service
        let written = WrittenUpstream(service: service, origin: request.target.origin)
        if let known = knownUpstreams.withLock({ $0[written] }) { return known }
        let key = upstreamKey(service: service, origin: request.target.origin)
        knownUpstreams.withLock { known in
            // Bounded: many origins (a redirect's, a paginated link's) only make it start again.
            if known.count >= 256 { known.removeAll(keepingCapacity: true) }
            known[written] = key
        }
        return key
    }

    /// The name of the upstream at `origin` (as a request's target writes it) for `service`.
    static func upstreamKey(service: String, origin: String) -> String {
        "\(service) \(Self.origin(of: origin))"
    }

    /// A service and an origin as the request writes it.
    private struct WrittenUpstream: Hashable {
        let service: String
        let origin: String
    }

    /// The upstream keys made so far.
    private static let knownUpstreams = Locked<[WrittenUpstream: String]>([:])

    /// Waits for the request's place, passes it on, and keeps what the answer says of the
    /// upstream's limits.
    public func intercept(
        _ request: TransportRequest,
        context: CallContext,
        next: (TransportRequest, CallContext) async throws -> TransportResponse
    ) async throws -> TransportResponse {
        let limits = context.options.upstreamLimits
        let budget = self.budget ?? limits.rate
        // Nothing configured and nothing heard yet: nothing to wait for.
        if budget == nil, let memory, memory.isEmpty {
            return try await passOn(request, context: context, upstream: nil, limits: limits, next: next)
        }
        let upstream = Self.upstreamKey(options: context.options, request: request)
        let deadline = RetryMiddleware.headDeadline(of: request, context: context)
        // A state in memory answers at once: no suspension, no task-local value.
        let reservation =
            if let memory {
                memory.reserveNow(upstream, budget: budget, before: deadline)
            } else {
                await onState(request) { await state.reserve(upstream, budget: budget, maxWait: deadline - .now, maxPause: limits.maxPause) }
            }
        switch reservation {
        case .refused(let wait):
            throw refusal(waiting: wait, request: request, context: context)
        case .unavailable(let reason):
            throw unavailable(reason, request: request, context: context)
        case .granted(let wait) where wait > .zero:
            try await waitForPlace(wait, upstream: upstream, budget: budget, limits: limits, deadline: deadline, request: request, context: context)
        case .granted:
            break
        }
        return try await passOn(request, context: context, upstream: upstream, limits: limits, next: next)
    }

    /// Waits `wait` for the place reserved in `budget`, then out any pause that began meanwhile;
    /// cancelled, gives the place back.
    private func waitForPlace(
        _ wait: Duration, upstream: String, budget: RateBudget?, limits: APIConfig.UpstreamLimits, deadline: ContinuousClock.Instant,
        request: TransportRequest, context: CallContext
    ) async throws {
        LimitMetrics.waited(wait, service: context.options.service, factory: metrics)
        do {
            try await Task.sleep(for: wait)
        } catch {
            await onState(request) { await state.release(upstream, budget: budget, maxPause: limits.maxPause) }
            throw APIError.cancelled("while waiting for a place in the rate budget of \(context.options.service)", underlying: error)
        }
        try await waitOutPauses(of: upstream, budget: budget, limits: limits, deadline: deadline, request: request, context: context)
    }

    /// Holds a call that waited for its place while a pause began (a `Retry-After` another call,
    /// or another instance, was given): its place went by unsent, and it takes a new one after
    /// the pause, so that the calls the pause held go spaced by the budget, not all at its end.
    /// Pauses hold it at most `limits.maxPause` in all, whatever a shared store says: a pause
    /// longer than what is left of that is waited out to the limit, and the call goes.
    private func waitOutPauses(
        of upstream: String, budget: RateBudget?, limits: APIConfig.UpstreamLimits, deadline: ContinuousClock.Instant,
        request: TransportRequest, context: CallContext
    ) async throws {
        var held = Duration.zero
        while held < limits.maxPause {
            let said = await onState(request) { await state.remainingPause(of: upstream, maxPause: limits.maxPause) }
            guard said > .zero else { return }
            let left = limits.maxPause - held
            guard said <= left else {
                // Past the longest pause kept: waited out to it, with no new place (the place after
                // the pause would lie past it too).
                guard ContinuousClock.now + left <= deadline else { throw refusal(waiting: left, request: request, context: context) }
                try await sleep(left, service: context.options.service, onCancel: {})
                return
            }
            guard ContinuousClock.now + said <= deadline else { throw refusal(waiting: said, request: request, context: context) }
            let wait: Duration
            switch await onState(request, { await state.reserve(upstream, budget: budget, maxWait: deadline - .now, maxPause: limits.maxPause) }) {
            case .refused(let needed): throw refusal(waiting: needed, request: request, context: context)
            case .unavailable(let reason): throw unavailable(reason, request: request, context: context)
            case .granted(let granted): wait = Swift.max(granted, said)
            }
            held += said
            LimitMetrics.waited(wait, service: context.options.service, factory: metrics)
            try await sleep(wait, service: context.options.service) {
                await onState(request) { await state.release(upstream, budget: budget, maxPause: limits.maxPause) }
            }
        }
    }

    /// Sleeps `duration` out; cancelled, runs `onCancel` (a place given back) and throws
    /// `.cancelled`.
    private func sleep(_ duration: Duration, service: String, onCancel: () async -> Void) async throws {
        do {
            try await Task.sleep(for: duration)
        } catch {
            await onCancel()
            throw APIError.cancelled("while waiting out a pause of \(service)", underlying: error)
        }
    }

    /// The error of a call whose place comes after its deadline, counted.
    private func refusal(waiting wait: Duration, request: TransportRequest, context: CallContext) -> APIError {
        LimitMetrics.count("resourceful.ratelimit.refused", service: context.options.service, factory: metrics)
        return APIError(
            kind: .rateLimited,
            detail: "\(context.options.service) at \(Self.origin(of: request.target.origin)) takes no request for \(Self.seconds(wait)): after the call's deadline"
        )
    }

    /// The error of a call whose budget's state could not be used, and says to fail.
    private func unavailable(_ reason: String, request: TransportRequest, context: CallContext) -> APIError {
        LimitMetrics.count("resourceful.ratelimit.unavailable", service: context.options.service, factory: metrics)
        return APIError(
            kind: .sharedStateUnavailable,
            detail: "the rate budget of \(context.options.service) at \(Self.origin(of: request.target.origin)) could not be used (\(reason)): the request was not sent"
        )
    }

    /// Passes the request on, and keeps what the answer says of the upstream's limits.
    private func passOn(
        _ request: TransportRequest, context: CallContext, upstream: String?, limits: APIConfig.UpstreamLimits,
        next: (TransportRequest, CallContext) async throws -> TransportResponse
    ) async throws -> TransportResponse {
        let response = try await next(request, context)
        // An answer from the cache, or from another URL a redirect led to (maybe another
        // origin's), says nothing of this upstream's limits now.
        if !response.servedFromCache, response.redirects.isEmpty, Self.mayCarryLimits(response) {
            let upstream = upstream ?? Self.upstreamKey(options: context.options, request: request)
            await onState(request) { await learn(from: response, upstream: upstream, limits: limits, context: context) }
        }
        return response
    }

    /// Keeps the budget and pause `response` says its upstream takes.
    private func learn(from response: TransportResponse, upstream: String, limits: APIConfig.UpstreamLimits, context: CallContext) async {
        let said = RateLimitFields(status: response.status, fields: response.headerFields)
        if let learned = said.budget {
            // A learned budget makes no call wait longer than a pause may last, and holds for its
            // window (at most the longest pause) unless the upstream says it again.
            let slowest = 1 / (Double(limits.maxPause.nanoseconds) / 1e9)
            let capped = learned.requestsPerSecond >= slowest ? learned : RateBudget(requestsPerSecond: slowest, burst: learned.burst) ?? learned
            await state.learn(upstream, budget: capped, for: Swift.min(said.window ?? limits.maxPause, limits.maxPause))
        }
        guard let asked = said.pause else { return }
        let pause = Swift.min(asked, limits.maxPause)
        guard await state.pause(upstream, for: pause) else { return }
        LimitMetrics.count("resourceful.ratelimit.pauses", service: context.options.service, factory: metrics)
        var metadata: Logger.Metadata = [
            "resourceful.request-id": .string(context.requestID),
            "resourceful.upstream": .string(upstream),
            "resourceful.pause-ms": .stringConvertible(pause.nanoseconds / 1_000_000),
            "resourceful.pause-source": .string(said.pauseSource ?? ""),
        ]
        if asked > pause { metadata["resourceful.pause-asked-ms"] = .stringConvertible(Swift.min(asked, .seconds(Int64(Int32.max))).nanoseconds / 1_000_000) }
        context.logger.notice(asked > pause ? "Upstream paused, for less than it asked" : "Upstream paused", metadata: metadata)
    }

    /// Whether the response may say anything of its upstream's limits: a `429` or `503`, or a
    /// field named for them. Most responses are passed over without reading a value.
    private static func mayCarryLimits(_ response: TransportResponse) -> Bool {
        if response.status.code == 429 || response.status.code == 503 { return true }
        return response.headerFields.contains { field in
            let name = field.name.canonicalName
            // Most names start with neither letter: passed over at their first byte.
            switch name.utf8.first {
            case UInt8(ascii: "r"): return name.hasPrefix("ratelimit")
            case UInt8(ascii: "x"): return name.hasPrefix("x-ratelimit")
            default: return false
            }
        }
    }

    /// `https://api.example.com:8443`, as the request is sent.
    /// The origin as RFC 6454 compares it (scheme and host lower-cased, the default port
    /// written, no user information), so that spellings of one origin share one budget, and no
    /// user information reaches a row, a log line or an error.
    package static func origin(of written: String) -> String {
        URL(string: written).flatMap(Origin.init).map(\.description) ?? "(no origin)"
    }

    /// `2.5 s`.
    package static func seconds(_ duration: Duration) -> String {
        let milliseconds = duration.nanoseconds / 1_000_000
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : String(format: "%.3f s", Double(milliseconds) / 1000)
    }
}
