import HTTPTypes
public import Logging

/// The one object every request goes through.
///
/// Build it once from its dependencies and inject it where calls are made:
///
/// ```swift
/// let api = API(dependencies: try await APIDependencies.live(environment: "production"))
/// let user = try await api.call(ShowUser(id: 42))
/// ```
///
/// A call builds the request (base URL, path, query or body, headers, `Authorization` from the
/// storage), runs it through the middlewares around the ``HTTPTransport``, then decodes a 2xx
/// response or throws ``APIError``. `API` is a value: copies share the transport.
public struct API: Sendable {
    /// What an `API` depends on: any type with these five parts.
    public typealias Dependencies = HasAPIConfig & HasAuthenticationStorage & HasTransport & HasCoders & HasLogger & Sendable

    /// The configuration, read from the dependencies once, at creation.
    public let config: APIConfig
    /// The credential source.
    package let authenticationStorage: any AuthenticationStorage
    /// The transport.
    package let transport: any HTTPTransport
    /// What every call starts from: the configuration's settings and the injected coders.
    public let defaultOptions: RequestOptions
    /// The logger calls write through.
    public private(set) var logger: Logger
    /// The steps around the transport, outermost first.
    package let middlewares: [any APIMiddleware]
    /// The state a fleet shares, from the dependencies, ended by ``shutdown()``.
    let sharedState: SharedState?

    let builder: RequestBuilder
    /// Whether `authenticationStorage` bounds its own waits, checked once rather than per call.
    let storageHonoursDeadline: Bool
    /// The middlewares around the transport, composed once.
    let chain: Chain

    /// A request's way through the middlewares to the transport.
    typealias Chain = @Sendable (TransportRequest, CallContext) async throws -> TransportResponse

    /// Creates an API from `dependencies`, reading each of them once.
    ///
    /// - Parameter middlewares: The steps around the transport, outermost first; the default is
    ///   ``defaultMiddlewares``. When the dependencies hold a ``SharedState`` (``HasSharedState``,
    ///   as ``APIDependencies`` made from a configuration naming `sharedState.kind`), a
    ///   ``RateLimitMiddleware`` or ``CircuitBreakerMiddleware`` of the list made without a state
    ///   keeps its state there. Add your own before them (once per call) or after them (once per
    ///   hop of each attempt, after the attempt is logged): `API.defaultMiddlewares + [Signing()]`.
    ///   A request bound for another origin than its call's (a redirect) leaves without any header
    ///   field the redaction rules call a secret, whatever a middleware added. A
    ///   ``CredentialRefreshMiddleware/init(minimumInterval:)`` in the list (the default list has
    ///   one, after the retries) refreshes through the storage when the storage renews its own
    ///   credentials (a ``CredentialRefresher``, alone or in a chain, such as
    ///   `OAuth2AuthenticationStorage`): a `401` is refreshed once without a line of app code.
    public init(dependencies: any Dependencies, middlewares: [any APIMiddleware]? = nil) {
        let shared = (dependencies as? any HasSharedState)?.sharedState
        sharedState = shared
        let steps = middlewares ?? API.defaultMiddlewares
        config = dependencies.apiConfig
        authenticationStorage = dependencies.authenticationStorage
        storageHonoursDeadline = dependencies.authenticationStorage is any DeadlineHonouringStorage
        transport = dependencies.transport
        defaultOptions = RequestOptions(
            config: dependencies.apiConfig,
            requestEncoder: dependencies.requestEncoder,
            responseDecoder: dependencies.responseDecoder
        )
        logger = dependencies.logger
        // The refresh step, where the list puts it, refreshes through this API's storage.
        let storage = dependencies.authenticationStorage
        // One that has nothing to refresh through is left out of the chain: it would pass every
        // call through.
        // So is a circuit breaker with no policy to open by.
        let config = dependencies.apiConfig
        // The limit steps given no state keep theirs in the dependencies' shared state.
        let middlewares = steps.compactMap { step -> (any APIMiddleware)? in
            if let breaker = step as? CircuitBreakerMiddleware { return (shared.map { breaker.sharing($0) } ?? breaker).bound(to: config) }
            if let limit = step as? RateLimitMiddleware { return shared.map { limit.sharing($0) } ?? limit }
            guard let refresh = step as? CredentialRefreshMiddleware else { return step }
            return refresh.bound(to: storage)
        }
        self.middlewares = middlewares
        builder = RequestBuilder(config: dependencies.apiConfig)
        chain = Self.chain(middlewares, around: dependencies.transport)
    }

    /// Composes `middlewares`, first outermost, around the transport.
    private static func chain(_ middlewares: [any APIMiddleware], around transport: any HTTPTransport) -> Chain {
        var next: Chain = { request, context in
            var request = request
            var context = context
            // The options the steps before left: deadline, byte cap and redaction switches.
            context.applyOptions(to: &request)
            // Where a redirect goes, and without secrets when it leaves the call's origin.
            CrossOriginGuard.apply(to: &request, context: context)
            do {
                var response = try await transport.send(request)
                // The body is collected under the cap and deadline the steps before left.
                // The redaction switches in force here reach the logging step before.
                response.collectionLimits = .init(
                    maxBytes: request.maxResponseBytes,
                    deadline: request.deadline,
                    redactsRequestBody: request.shouldRedactRequestBody,
                    redactsResponseBody: request.shouldRedactResponseBody
                )
                return response
            } catch {
                throw APIError.classifying(error, deadline: request.deadline).at(.transport)
            }
        }
        for middleware in middlewares.reversed() {
            let rest = next
            let name = String(describing: type(of: middleware))
            // This package's own steps answer with what the steps after them answered, limits
            // and switches kept: they get the rest of the chain as it is.
            if middleware is any AnswersFromTheStepsAfter {
                next = { request, context in
                    do {
                        // Copied only when a step changed the options: most calls pass the
                        // request and context on as they are.
                        guard context.hasUnappliedOptions else { return try await middleware.intercept(request, context: context, next: rest) }
                        var (request, context) = (request, context)
                        context.applyOptions(to: &request)
                        return try await middleware.intercept(request, context: context, next: rest)
                    } catch {
                        throw APIError.thrown(error, byMiddleware: name)
                    }
                }
                continue
            }
            next = { request, context in
                // A step's change to the options reaches the request the next step gets.
                var request = request
                var context = context
                if context.hasUnappliedOptions { context.applyOptions(to: &request) }
                // A response the step made itself keeps the limits and switches of what it was
                // given and of what the steps after it answered.
                let answered = Locked<TransportResponse.CollectionLimits?>(nil)
                var response: TransportResponse
                do {
                    response = try await middleware.intercept(request, context: context) { request, context in
                        let response = try await rest(request, context)
                        answered.withLock { $0 = response.collectionLimits }
                        return response
                    }
                } catch {
                    // Wrapped once, here: the steps before see an `APIError` naming this one.
                    throw APIError.thrown(error, byMiddleware: name)
                }
                response.keepCollectionLimits(of: request, answered: answered.value)
                return response
            }
        }
        return next
    }

    /// Tracing, metrics, retries, the upstream's circuit breaker and rate budget, the credential
    /// refresh, logging and redirects, in that order: a call is one span and one count whatever
    /// its attempts, each attempt passes the upstream's breaker when one is configured
    /// (``CircuitBreakerMiddleware``) and takes a place in its budget, keeping to its pauses
    /// (``RateLimitMiddleware``), a `401` is refreshed within each
    /// attempt when the ``API``'s storage renews its own credentials
    /// (``CredentialRefreshMiddleware/init(minimumInterval:)``), each attempt is logged once with
    /// the answer it ended with, and each redirect is followed by ``RedirectMiddleware``. Tracing
    /// and metrics record through what the app bootstrapped and cost little when nothing is.
    ///
    /// Middlewares added after these run once per hop of a redirect (an ``HTTPCacheMiddleware``
    /// belongs there); those added before run once per call. A list without a
    /// ``RedirectMiddleware`` follows no redirect: a `3xx` answer fails the call as
    /// ``APIError/Kind/unacceptableStatus``.
    public static var defaultMiddlewares: [any APIMiddleware] {
        [
            TracingMiddleware(), MetricsMiddleware(), RetryMiddleware(), CircuitBreakerMiddleware(), RateLimitMiddleware(),
            CredentialRefreshMiddleware(), LoggingMiddleware(), RedirectMiddleware(),
        ]
    }

    /// ``defaultMiddlewares`` with a credential refresh step for `refresher` after the retries, so
    /// that a 401 is refreshed and sent again within each attempt: one refresh for any number of
    /// calls refused at once with the same credential, bounded by the deadline of the call that
    /// started it, and none within 5 seconds of one that gave a credential the server still
    /// refuses, or that failed (a server that keeps refusing fresh credentials is not asked again
    /// on every call).
    public static func defaultMiddlewares(refresher: any CredentialRefresher) -> [any APIMiddleware] {
        [
            TracingMiddleware(), MetricsMiddleware(), RetryMiddleware(), CircuitBreakerMiddleware(), RateLimitMiddleware(),
            CredentialRefreshMiddleware(refresher: refresher), LoggingMiddleware(), RedirectMiddleware(),
        ]
    }

    /// This API writing through `logger` instead, such as an incoming request's logger in a server.
    public func with(logger: Logger) -> API {
        var copy = self
        copy.logger = logger
        return copy
    }

    /// Shuts the transport down, and ends the connections of the dependencies' shared state
    /// (for every API made from them). Calls made after it fail.
    ///
    /// The shared state's writes still in flight, and renewals whose answer may bring a rotated
    /// refresh token, are waited for first (``SharedState/drain()``), while the transport still
    /// carries them.
    public func shutdown() async throws {
        await sharedState?.drain()
        do {
            try await transport.shutdown()
        } catch {
            await sharedState?.shutdown()
            throw error
        }
        await sharedState?.shutdown()
    }
}

/// The last step before the transport, which no middleware list leaves out: a redirect goes where
/// its `Location` said, and a request bound elsewhere than its call's origin leaves without any
/// header field the redaction rules call a secret, whatever the steps after ``RedirectMiddleware``
/// changed or added (a query item with a key, another path, a signature).
///
/// ``RedirectMiddleware`` decides which redirects are followed and what they carry; this step
/// holds the steps after it to that decision.
struct CrossOriginGuard {
    /// Makes `request` what may leave, for a call whose context is `context`.
    static func apply(to request: inout TransportRequest, context: CallContext) {
        if let hop = context.redirect {
            request.target = hop.target
        }
        if context.redirect?.leftOrigin == true || !request.target.sameOrigin(as: context.target) {
            // Bound elsewhere than the call's origin, or back from there: no credential goes with it.
            let secrets = context.options.crossOriginSecrets
            request.headerFields = request.headerFields.filter { !secrets.contains($0.name.canonicalName) }
        }
    }
}
