import HTTPTypes

/// Answers a `401 Unauthorized` by refreshing the credential once and sending the request again.
///
/// At most one refresh runs per service: calls that see 401 while one runs wait for it, and calls
/// that sent a credential older than the latest refresh are sent again with the new one without
/// another refresh. Each call is sent again at most once; a second 401 fails it with
/// ``APIError/Kind/unauthorized``. A refresher that throws (`CancellationError` included) fails
/// the call with ``APIError/Kind/authentication``; the next 401 after ``minimumInterval`` may
/// refresh again. Within ``minimumInterval`` of the last refresh, a 401 to the credential it gave
/// (or after it failed) fails with ``APIError/Kind/unauthorized`` without another refresh, so a
/// server that keeps rejecting fresh credentials cannot cause a refresh per call.
///
/// The refresh runs on its own and records its result itself; a call waits for it until the
/// call's deadline or cancellation, whichever comes first.
package final class CredentialRefreshMiddleware: APIMiddleware {
    private struct ServiceState {
        var running: Task<String, any Error>?
        var latest: String?
        var finished: ContinuousClock.Instant?
        var generation: UInt64 = 0
    }

    /// What a refresher threw, kept apart from the cancellation of a waiting call.
    private struct RefreshFailed: Error {
        var underlying: any Error
    }

    private enum Next {
        case wait(Task<String, any Error>)
        case use(String)
        case coolingDown
    }

    private let refresher: any CredentialRefresher
    /// The least time between two refreshes of one service.
    package let minimumInterval: Duration
    private let states = Locked<[String: ServiceState]>([:])

    /// Creates the step; share one instance among the calls that should share refreshes.
    ///
    /// - Parameter minimumInterval: The least time between two refreshes of one service.
    package init(refresher: any CredentialRefresher, minimumInterval: Duration = .seconds(5)) {
        self.refresher = refresher
        self.minimumInterval = minimumInterval
    }

    /// Passes the request on; on 401, refreshes (or joins a refresh) and sends it once more.
    package func intercept(
        _ request: TransportRequest,
        context: CallContext,
        next: (TransportRequest, CallContext) async throws -> TransportResponse
    ) async throws -> TransportResponse {
        let response = try await next(request, context)
        guard response.status == .unauthorized else { return response }
        let field = context.config.credentialField
        let sent = request.headerFields[field]
        let header = try await freshCredential(for: context.config.service, replacing: sent, deadline: request.deadline)
        guard HeaderValidation.isValidValue(header) else {
            throw APIError(kind: .invalidRequest, detail: "the refreshed credential holds CR, LF or NUL")
        }
        var retried = request
        retried.headerFields[field] = header
        let second = try await next(retried, context)
        guard second.status != .unauthorized else {
            throw APIError(kind: .unauthorized, status: .unauthorized, detail: "still unauthorized after a refreshed credential")
        }
        return second
    }

    /// The credential to send instead of `sent`: a newer one already refreshed, the one being
    /// refreshed now, or a new refresh's.
    private func freshCredential(
        for service: String,
        replacing sent: String?,
        deadline: ContinuousClock.Instant
    ) async throws -> String {
        let now = ContinuousClock.now
        let next: Next = states.withLock { states in
            var state = states[service] ?? ServiceState()
            if let running = state.running { return .wait(running) }
            if let latest = state.latest, latest != sent { return .use(latest) }
            if let finished = state.finished, now - finished < minimumInterval { return .coolingDown }
            state.generation &+= 1
            let generation = state.generation
            let refresher = refresher
            let running = Task<String, any Error> { [weak self] in
                let result: Result<String, any Error>
                do {
                    result = .success(try await refresher.refreshCredential(for: service))
                } catch {
                    result = .failure(RefreshFailed(underlying: error))
                }
                self?.finish(service: service, generation: generation, result: result)
                return try result.get()
            }
            state.running = running
            states[service] = state
            return .wait(running)
        }
        switch next {
        case .use(let header):
            return header
        case .coolingDown:
            throw APIError(
                kind: .unauthorized,
                status: .unauthorized,
                detail: "the credential was refreshed less than \(minimumInterval) ago and is still refused"
            )
        case .wait(let task):
            do {
                return try await SharedTaskWait.value(of: task, deadline: deadline)
            } catch is CancellationError {
                throw APIError(kind: .cancelled)
            } catch let failure as RefreshFailed {
                throw APIError(kind: .authentication, detail: "the credential refresh failed", underlying: failure.underlying)
            }
        }
    }

    /// Records a finished refresh, whether or not any call still waits for it.
    private func finish(service: String, generation: UInt64, result: Result<String, any Error>) {
        states.withLock { states in
            guard var state = states[service], state.generation == generation else { return }
            state.running = nil
            state.finished = .now
            if case .success(let header) = result { state.latest = header }
            states[service] = state
        }
    }
}
