import HTTPTypes
import Synchronization

/// Answers a `401 Unauthorized` by refreshing the credential once and sending the request again.
///
/// At most one refresh runs per service: calls that see 401 while one runs wait for it, and calls
/// that sent a credential older than the latest refresh are sent again with the new one without
/// another refresh. Each call is sent again at most once; a second 401 fails it with
/// ``APIError/Kind/unauthorized``. A refresher that throws fails the call with
/// ``APIError/Kind/authentication``. The refresh counts against the call's deadline.
public final class CredentialRefreshMiddleware: APIMiddleware {
    private struct ServiceState {
        var running: Task<String, any Error>?
        var latest: String?
    }

    private let refresher: any CredentialRefresher
    private let states = Mutex<[String: ServiceState]>([:])

    /// Creates the step; share one instance among the calls that should share refreshes.
    public init(refresher: any CredentialRefresher) {
        self.refresher = refresher
    }

    /// Passes the request on; on 401, refreshes (or joins a refresh) and sends it once more.
    public func intercept(
        _ request: TransportRequest,
        context: CallContext,
        next: (TransportRequest, CallContext) async throws -> TransportResponse
    ) async throws -> TransportResponse {
        let response = try await next(request, context)
        guard response.status == .unauthorized else { return response }
        let sent = request.headerFields[.authorization]
        let header = try await Deadline.run(until: request.deadline) { [self] in
            try await self.freshCredential(for: context.config.service, replacing: sent)
        }
        guard HeaderValidation.isValidValue(header) else {
            throw APIError(kind: .invalidRequest, detail: "the refreshed Authorization value holds CR, LF or NUL")
        }
        var retried = request
        retried.headerFields[.authorization] = header
        let second = try await next(retried, context)
        guard second.status != .unauthorized else {
            throw APIError(kind: .unauthorized, status: .unauthorized, detail: "still unauthorized after a refreshed credential")
        }
        return second
    }

    /// The credential to send instead of `sent`: a newer one already refreshed, the one being
    /// refreshed now, or a new refresh's.
    private func freshCredential(for service: String, replacing sent: String?) async throws -> String {
        let task: Task<String, any Error> = states.withLock { states in
            var state = states[service] ?? ServiceState()
            if let running = state.running { return running }
            if let latest = state.latest, latest != sent { return Task { latest } }
            let refresher = refresher
            let running = Task { try await refresher.refreshCredential(for: service) }
            state.running = running
            states[service] = state
            return running
        }
        do {
            let header = try await SharedTaskWait.value(of: task)
            states.withLock { states in
                if states[service]?.running == task {
                    states[service] = ServiceState(running: nil, latest: header)
                }
            }
            return header
        } catch is CancellationError {
            throw APIError(kind: .cancelled)
        } catch {
            states.withLock { states in
                if states[service]?.running == task { states[service]?.running = nil }
            }
            throw APIError(kind: .authentication, detail: "the credential refresh failed", underlying: error)
        }
    }
}
