import Foundation
import HTTPTypes
import Logging

/// Tries failed attempts again, within the call's one deadline.
///
/// An attempt is tried again when the request allows it (``RequestOptions/allowsRetries``), the
/// policy (``RequestOptions/retryPolicy``, or the step's own ``policy``) has attempts left, and it failed to connect or was cut
/// off (``APIError/Kind/transport`` from a ``TransportError``: any other error a transport throws
/// is not tried again), or answered with a status of
/// ``APIConfig/RetryPolicy/retryableStatuses`` (429, 502, 503, 504 by default). The wait is the
/// server's `Retry-After` (seconds or HTTP-date) when it gives one, else an exponential backoff
/// with full jitter. A request whose connection closed before any of the answer arrived (a pooled
/// keep-alive connection the server had just closed) is sent again at once, without a wait, the
/// first time in a call. A wait that would pass the call's deadline is not started: the last
/// answer or error is returned instead. For a stream or download (a body read as it arrives),
/// that deadline is its head's: ``RequestOptions/timeout`` from the start of the call, so that a
/// `Retry-After` of a year returns the `503` at once rather than waiting within a stream's
/// unbounded ``RequestOptions/streamTimeout``. A body of collected bytes is sent again as it is; a
/// request whose body is a stream is not tried again (the stream was read). TLS failures and
/// refused redirects are never tried again. A request whose method is not idempotent (`POST`,
/// `PATCH`, RFC 9110 §9.2.2) — the method it is sent with, however it was chosen — is tried
/// again only when it carries an `Idempotency-Key` or chose to allow retries, and is then sent
/// with one `Idempotency-Key` across its attempts: a key already present (the request's own, or
/// the one an event stream or download keeps across its connections) is kept.
public struct RetryMiddleware: APIMiddleware, AnswersFromTheStepsAfter {
    /// A policy for every call through this step, in place of each call's
    /// ``RequestOptions/retryPolicy``; `nil` (the default) keeps the call's.
    public var policy: APIConfig.RetryPolicy?

    /// Creates the retry step.
    public init(policy: APIConfig.RetryPolicy? = nil) {
        self.policy = policy
    }

    /// Passes the request on, again after a wait while the policy allows.
    public func intercept(
        _ request: TransportRequest,
        context: CallContext,
        next: (TransportRequest, CallContext) async throws -> TransportResponse
    ) async throws -> TransportResponse {
        // A streamed body is read once: it cannot be sent again.
        // Decided from the method sent, not the verb: an update sent as PATCH is no more
        // idempotent than a create, whether it chose PATCH itself or in `configure`.
        guard context.options.allowsRetries(of: request), request.body?.canBeSentAgain ?? true else {
            return try await next(request, context)
        }
        var request = request
        if !request.method.isIdempotent, request.headerFields[.idempotencyKey] == nil {
            // A POST or PATCH that chose retries: one key for all the attempts, so that the
            // server can tell a request sent again.
            request.headerFields[.idempotencyKey] = Self.makeIdempotencyKey()
        }
        let policy = self.policy ?? context.options.retryPolicy
        guard policy.maxAttempts > 1 else { return try await next(request, context) }
        var attempt = 1
        var resentAtOnce = false
        let deadline = Self.headDeadline(of: request, context: context)
        while true {
            var attemptContext = context
            if attemptContext.attempt != attempt { attemptContext.attempt = attempt }
            let wait: Duration
            do {
                let response = try await next(request, attemptContext)
                guard attempt < policy.maxAttempts, policy.retryableStatuses.contains(response.status.code) else { return response }
                // The server's `Retry-After`, cut to the longest pause an upstream may impose.
                let asked = RetryAfter.delay(response.headerFields[values: .retryAfter].first).map { Swift.min($0, context.options.upstreamLimits.maxPause) }
                wait = asked ?? Self.backoff(attempt: attempt, policy: policy)
                guard ContinuousClock.now + wait < deadline else { return response }
                Self.log(context, attempt: attempt, wait: wait, reason: String(response.status.code))
            } catch {
                // `next` throws what the pipeline classified; a middleware's own error is not retried.
                guard let failure = error as? APIError else { throw error }
                // Only a connection failure a transport reported as such may go better next
                // time: refused connections were already tried again by the transport until its
                // connect-retry budget was spent, and any other error (a replay with no recording)
                // would come again.
                guard attempt < policy.maxAttempts, failure.kind == .transport, failure.mayRetry else {
                    throw error
                }
                if failure.closedBeforeAnswer, !resentAtOnce {
                    // Nothing of the answer came: sent again at once on a new connection, once a call.
                    resentAtOnce = true
                    wait = .zero
                } else {
                    wait = Self.backoff(attempt: attempt, policy: policy)
                }
                guard ContinuousClock.now + wait < deadline else { throw error }
                Self.log(context, attempt: attempt, wait: wait, reason: failure.kind.description)
            }
            do {
                try await Task.sleep(for: wait)
            } catch {
                throw APIError.cancelled(underlying: error)
            }
            attempt += 1
        }
    }

    /// When the last attempt must have started: the request's deadline for a collected call; for
    /// a streamed one (``TransportRequest/streamsResponseBody``), whose deadline is the whole
    /// stream's (``RequestOptions/streamTimeout``, far off by default), the time its head is
    /// awaited, ``TransportRequest/idleTimeout`` (``RequestOptions/timeout``) from the start of
    /// the call, when that comes first.
    static func headDeadline(of request: TransportRequest, context: CallContext) -> ContinuousClock.Instant {
        guard request.streamsResponseBody, let timeout = request.idleTimeout else { return request.deadline }
        return Swift.min(request.deadline, context.start + Swift.min(Swift.max(timeout, .zero), API.unboundedStream))
    }

    /// The `Idempotency-Key` that every connection of one event stream or download sends, made
    /// once for all of them, so that the server sees one request however often it is opened
    /// again: for a method that is not idempotent, when the request chose retries and carries no
    /// key of its own (`headers`, the request's ``ResourceRequest/headers``); `nil` otherwise.
    static func keyForConnections(method: HTTPRequest.Method, options: RequestOptions, headers: [String: String]) -> String? {
        guard !method.isIdempotent, options.allowsRetries, !headers.keys.contains(where: { $0.lowercased() == "idempotency-key" }) else {
            return nil
        }
        return makeIdempotencyKey()
    }

    /// A random (version 4) UUID in its usual upper-case form, for `Idempotency-Key`.
    ///
    /// Its 122 random bits come from the system's secure generator, two 64-bit draws: Foundation's
    /// `UUID()` opens, reads and closes `/dev/urandom` on Linux, about five times the cost.
    static func makeIdempotencyKey() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() & ~0xF000 | 0x4000  // version 4 in bits 12–15
        let low = generator.next() & ~(0b11 << 62) | (0b10 << 62)  // the RFC 9562 variant
        return String(unsafeUninitializedCapacity: 36) { buffer in
            let digits: StaticString = "0123456789ABCDEF"
            var index = 0
            for nibble in 0..<32 {
                if nibble == 8 || nibble == 12 || nibble == 16 || nibble == 20 {
                    buffer[index] = UInt8(ascii: "-")
                    index += 1
                }
                let word = nibble < 16 ? high : low
                buffer[index] = digits.utf8Start[Int((word >> (60 - 4 * UInt64(nibble % 16))) & 0xF)]
                index += 1
            }
            return index
        }
    }

    /// A wait drawn at random between zero and `baseDelay · 2^(attempt-1)`, capped at `maxDelay`.
    static func backoff(attempt: Int, policy: APIConfig.RetryPolicy) -> Duration {
        let base = max(policy.baseDelay.nanoseconds, 0)
        let cap = max(policy.maxDelay.nanoseconds, 0)
        let shift = min(attempt - 1, 32)
        let (scaled, overflow) = base.multipliedReportingOverflow(by: Int64(1) << shift)
        let bound = overflow ? cap : min(scaled, cap)
        return .nanoseconds(bound > 0 ? Int64.random(in: 0...bound) : 0)
    }

    private static func log(_ context: CallContext, attempt: Int, wait: Duration, reason: String) {
        context.logger.debug(
            "Retrying request",
            metadata: [
                "resourceful.request-id": .string(context.requestID),
                "resourceful.attempt": .stringConvertible(attempt),
                "resourceful.retry-reason": .string(reason),
                "resourceful.retry-wait-ms": .stringConvertible(wait.nanoseconds / 1_000_000),
            ]
        )
    }
}
