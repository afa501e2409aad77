import Foundation
import HTTPTypes

/// Answers a `401 Unauthorized` by refreshing the credential once and sending the request again.
///
/// Refreshes are kept apart by service and by the credential that was refused: a call is only
/// ever sent again with a credential refreshed from the one it sent, so APIs whose storages hold
/// different users' credentials never receive each other's, even through one shared step.
///
/// - At most one refresh runs per service and refused credential: calls that see 401 while it runs
///   wait for it; calls that sent a credential already refreshed are sent again with the new one
///   without another refresh.
/// - Each call is sent again at most once; a second 401 fails it with
///   ``APIError/Kind/unauthorized``.
/// - A refresh is bounded by the deadline of the call that started it. One that does not end by
///   then (or that is cancelled) is abandoned, its late result dropped: the next 401 starts
///   another. A waiting call gives up at its own deadline or cancellation, leaving no task behind.
/// - A refresher that throws fails the waiting calls with ``APIError/Kind/authentication``; within
///   ``minimumInterval`` after that, a 401 to the same credential fails at once ("the last refresh
///   failed"), so a broken refresher is not asked on every call.
/// - Within ``minimumInterval`` of a refresh, a 401 to the credential it gave fails with
///   ``APIError/Kind/unauthorized`` without another refresh, so a server that keeps rejecting
///   fresh credentials cannot cause a refresh per call.
public final class CredentialRefreshMiddleware: APIMiddleware, AnswersFromTheStepsAfter {
    /// What a refresh of one service, from one refused credential, has come to.
    private struct Key: Hashable {
        var service: String
        var refused: String?
    }

    private struct State {
        var running: (refresh: Refresh, generation: UInt64)?
        /// The credential a refresh from this one gave, and when.
        var refreshed: (header: String, at: ContinuousClock.Instant)?
        /// When a refresh that gave this credential ended: it is not refreshed again before
        /// ``minimumInterval`` has passed.
        var givenAt: ContinuousClock.Instant?
        /// When the last refresh from this credential failed.
        var failedAt: ContinuousClock.Instant?

        func isStale(now: ContinuousClock.Instant, keepFor: Duration) -> Bool {
            guard running == nil else { return false }
            let last = [refreshed?.at, givenAt, failedAt].compactMap { $0 }.max()
            return last.map { now - $0 > keepFor } ?? true
        }
    }

    /// One refresh: the calls waiting for it, settled together when it ends.
    private final class Refresh: Sendable {
        private let state = Locked<(result: Result<String, any Error>?, waiters: [Outcome<String>])>((nil, []))

        /// A waiter for the result, settled at once when the refresh has ended.
        func join() -> Outcome<String> {
            let outcome = Outcome<String>()
            let result: Result<String, any Error>? = state.withLock { state in
                if state.result == nil { state.waiters.append(outcome) }
                return state.result
            }
            if let result { outcome.settle(result) }
            return outcome
        }

        func finish(_ result: Result<String, any Error>) {
            let waiters = state.withLock { state in
                state.result = result
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.settle(result) }
        }
    }

    /// What a refresher threw, kept apart from the time-out or cancellation of the refresh.
    private struct RefreshFailed: Error {
        var underlying: any Error
    }

    private enum Next {
        case wait(Outcome<String>)
        case use(String)
        case stillRefused
        case recentlyFailed
    }

    private let refresher: any CredentialRefresher
    /// Whether the step has a refresher: given one, or bound to its ``API``'s storage.
    private var refreshes: Bool { !(refresher is Unbound) }
    /// The least time between two refreshes of one credential.
    package let minimumInterval: Duration
    private let states = Locked<(byKey: [Key: State], generation: UInt64)>(([:], 0))

    /// Creates the step; share one instance among the calls that should share refreshes.
    ///
    /// - Parameter minimumInterval: The least time between two refreshes of one credential.
    public init(refresher: any CredentialRefresher, minimumInterval: Duration = .seconds(5)) {
        self.refresher = refresher
        self.minimumInterval = minimumInterval
    }

    /// The refresh step of ``API/defaultMiddlewares``: it refreshes through the credential storage
    /// of the ``API`` it is given to when that storage renews its own credentials (a
    /// ``CredentialRefresher``, alone or as a link of a ``ChainedAuthenticationStorage``, as
    /// `OAuth2AuthenticationStorage` is), and passes every call through with any other storage.
    /// Put it where the refresh should run: after the retries, before the logging step.
    ///
    /// - Parameter minimumInterval: The least time between two refreshes of one credential.
    public init(minimumInterval: Duration = .seconds(5)) {
        refresher = Unbound()
        self.minimumInterval = minimumInterval
    }

    /// What an unbound step holds in place of a refresher: never asked.
    private struct Unbound: CredentialRefresher {
        struct NotBound: Error {}
        func refreshCredential(for service: String) async throws -> String { throw NotBound() }
    }

    /// This step as an ``API`` over `storage` runs it: itself when it has a refresher, else a
    /// step refreshing through `storage` when the storage renews its own credentials, else `nil`
    /// (it would pass every call through).
    package func bound(to storage: any AuthenticationStorage) -> CredentialRefreshMiddleware? {
        if refreshes { return self }
        return Self.refresher(of: storage).map { CredentialRefreshMiddleware(refresher: $0, minimumInterval: minimumInterval) }
    }

    /// `storage`, or the first link of its chain, when it renews its own credentials.
    static func refresher(of storage: any AuthenticationStorage) -> (any CredentialRefresher)? {
        (storage as? any CredentialRefresher)
            ?? (storage as? ChainedAuthenticationStorage)?.links.lazy.compactMap({ $0.storage as? any CredentialRefresher }).first
    }

    /// Passes the request on, renewing first a credential its storage says has expired
    /// (``CallContext/credentialExpiresAt``); on 401, refreshes (or joins a refresh) and sends it
    /// once more.
    public func intercept(
        _ request: TransportRequest,
        context: CallContext,
        next: (TransportRequest, CallContext) async throws -> TransportResponse
    ) async throws -> TransportResponse {
        guard refreshes else { return try await next(request, context) }
        var request = request
        if let expiry = context.credentialExpiresAt, expiry <= Date(), context.redirect == nil, request.target.sameOrigin(as: context.target) {
            let field = context.options.credentialField
            do {
                request.headerFields[field] = try await freshCredential(
                    for: Key(service: context.options.service, refused: request.headerFields[field]), deadline: request.deadline
                )
            } catch let error as APIError where error.kind == .unauthorized {
                // Refreshed moments ago and said to be expired already: the server decides.
            }
        }
        let response = try await next(request, context)
        guard response.status == .unauthorized else { return response }
        // A 401 reached through a redirect answers another URL (perhaps another origin's), a
        // request bound elsewhere is not this service's to answer with its credential, and a
        // streamed body cannot be sent again: none is refreshed and sent again.
        guard response.redirects.isEmpty, context.redirect == nil, request.target.sameOrigin(as: context.target),
            request.body?.canBeSentAgain ?? true
        else { return response }
        let field = context.options.credentialField
        let sent = request.headerFields[field]
        let header = try await freshCredential(for: Key(service: context.options.service, refused: sent), deadline: request.deadline)
        var retried = request
        retried.headerFields[field] = header
        let second = try await next(retried, context)
        guard second.status != .unauthorized else {
            throw APIError(kind: .unauthorized, status: .unauthorized, detail: "still unauthorized after a refreshed credential")
        }
        return second
    }

    /// The credential to send instead of `key.refused`: one already refreshed from it, the one
    /// being refreshed from it now, or a new refresh's; refused when it holds CR, LF or NUL.
    private func freshCredential(for key: Key, deadline: ContinuousClock.Instant) async throws -> String {
        let now = ContinuousClock.now
        let next: Next = states.withLock { states in
            // Forget what no call can use any more, so that the states stay few.
            let keepFor = max(minimumInterval, .seconds(60))
            if states.byKey.count > 64 { states.byKey = states.byKey.filter { !$0.value.isStale(now: now, keepFor: keepFor) } }
            var state = states.byKey[key] ?? State()
            if let running = state.running { return .wait(running.refresh.join()) }
            if let refreshed = state.refreshed, refreshed.header != key.refused { return .use(refreshed.header) }
            if let given = state.givenAt, now - given < minimumInterval { return .stillRefused }
            if let failed = state.failedAt, now - failed < minimumInterval { return .recentlyFailed }
            states.generation &+= 1
            let generation = states.generation
            let refresh = Refresh()
            state.running = (refresh, generation)
            states.byKey[key] = state
            let waiter = refresh.join()
            let refresher = refresher
            Task { [weak self] in
                let result: Result<String, any Error>
                do {
                    result = .success(
                        try await Deadline.run(until: deadline) {
                            do {
                                return try await refresher.refreshCredential(for: key.service)
                            } catch let error as CancellationError {
                                throw error
                            } catch {
                                throw RefreshFailed(underlying: error)
                            }
                        }
                    )
                } catch {
                    result = .failure(error)
                }
                self?.finish(key, generation: generation, result: result)
                refresh.finish(result)
            }
            return .wait(waiter)
        }
        let header: String
        switch next {
        case .use(let refreshed):
            header = refreshed
        case .stillRefused:
            throw APIError(
                kind: .unauthorized,
                status: .unauthorized,
                detail: "the credential was refreshed less than \(minimumInterval) ago and is still refused"
            )
        case .recentlyFailed:
            throw APIError(kind: .authentication, detail: "the last credential refresh failed less than \(minimumInterval) ago")
        case .wait(let outcome):
            do {
                header = try await outcome.value(deadline: deadline)
            } catch {
                // This call's cancellation is its own; the shared refresh's failure or
                // cancellation is an authentication failure; a time-out is as it is.
                let (kind, detail, underlying): (APIError.Kind, String?, (any Error)?)
                switch error {
                case is CancellationError: (kind, detail, underlying) = (.cancelled, nil, nil)
                case let failure as RefreshFailed: (kind, detail, underlying) = (.authentication, "the credential refresh failed", failure.underlying)
                case let error as APIError where error.kind == .cancelled: (kind, detail, underlying) = (.authentication, "the credential refresh was cancelled", nil)
                default: throw error
                }
                throw APIError(kind: kind, detail: detail, underlying: underlying)
            }
        }
        guard HeaderValidation.isValidValue(header) else {
            throw APIError(kind: .invalidRequest, detail: "the refreshed credential holds CR, LF or NUL")
        }
        return header
    }

    /// Records a refresh's end, unless it was abandoned for a newer one: a credential it gave,
    /// a failure (which starts the cool-down), or nothing for one that timed out or was cancelled,
    /// so that the next 401 starts another.
    private func finish(_ key: Key, generation: UInt64, result: Result<String, any Error>) {
        let now = ContinuousClock.now
        states.withLock { states in
            guard var state = states.byKey[key], state.running?.generation == generation else { return }
            state.running = nil
            switch result {
            case .success(let header) where header == key.refused:
                // The refresher gave the very credential that was refused.
                state.refreshed = (header, now)
                state.givenAt = now
            case .success(let header):
                state.refreshed = (header, now)
                var given = states.byKey[Key(service: key.service, refused: header)] ?? State()
                given.givenAt = now
                states.byKey[Key(service: key.service, refused: header)] = given
            case .failure(let error) where error is RefreshFailed:
                state.failedAt = now
            case .failure:
                break
            }
            states.byKey[key] = state
        }
    }
}
