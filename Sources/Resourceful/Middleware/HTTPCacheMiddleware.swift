package import CoreMetrics
package import Foundation
import HTTPTypes
import Logging

/// An opt-in private HTTP cache after RFC 9111: repeated `GET`s of unchanged resources are
/// answered from the cache, or revalidated with a conditional request the server can answer with
/// a bodiless `304`.
///
/// Put it last, next to the transport, after the ``RedirectMiddleware`` of
/// ``API/defaultMiddlewares``, so that logging, retries and metrics see what it answers and each
/// hop of a redirect is filed under its own URL:
///
/// ```swift
/// let cache = HTTPCacheMiddleware(storage: InMemoryHTTPCacheStorage(maxBytes: 20 * 1024 * 1024))
/// let api = API(dependencies: dependencies, middlewares: API.defaultMiddlewares + [cache])
/// ```
///
/// - **Per credential:** every part of a request that the redaction rules call a secret
///   (``APIConfig/redaction``: `Authorization`, `Cookie`, the configured credential field,
///   `X-Api-Key` and other masked header fields, masked query items such as `api_key=`) is its
///   credential. An answer to a credentialed request is filed under a keyed digest of that
///   credential (HMAC-SHA256 with ``HTTPCacheDigestKey``) and answers only requests with the
///   very same credential: never another user's, never an anonymous call, never a call made
///   after the storage's credential changed or was removed. Keys hold the URL with masked query
///   values replaced, never a secret. With the default key, this process's own, entries stored
///   by another process (in a shared storage) are misses.
/// - **Stored:** answers to `GET` with a status that may be stored (200, 203, 204, 300, 301, 308,
///   404, 405, 410, 414, 501) that say how long they stay fresh (`Cache-Control: max-age`,
///   `Expires`) or how to revalidate them (`ETag`, `Last-Modified`). Not `no-store` (of the request
///   or the response), not `Vary: *`, and not an answer reached through a redirect
///   (``TransportResponse/redirects``, seen by a cache placed before the redirect step: the
///   next call may be sent elsewhere). Not a
///   `private` answer to an anonymous request (nothing tells whose it is). Not an answer to a
///   credentialed request, unless the answer says `public` (or `must-revalidate`, `s-maxage`, as
///   RFC 9111 §3.5 allows) or the configuration allows it for the service
///   (``APIConfig/CacheSettings/storesAuthorizedResponses``) — and then for that credential only.
/// - **Fresh** (its age under `max-age`, or before `Expires`, and neither `no-cache` nor a request
///   `max-age` it exceeds): answered from the cache with an `Age` field, without the network.
/// - **Stale:** sent with `If-None-Match` (its `ETag`) and `If-Modified-Since` (its
///   `Last-Modified`); a `304` is answered with the stored response, its fields updated. No
///   heuristic freshness: an answer that names no lifetime is revalidated every time.
///   The `304` updates the stored response its validator names as it is stored when the `304`
///   arrives (RFC 9111 §4.3.4): a newer response stored meanwhile by another call stays, and an
///   answer older than the stored one (by its `Date`) never replaces it.
/// - **`Vary`:** an entry answers only requests with the same values of the fields it names; the
///   values of fields that can carry a credential (`Authorization`, `Cookie`…) are kept as
///   keyed digests, never as they are.
/// - **Nothing secret in a field:** response fields that can carry a credential (`Set-Cookie`,
///   `X-Auth-Token`…, as the redaction rules say) are not stored, so that no storage holds them
///   and no later call is given them again; the call that received them gets them.
/// - **Unsafe methods** (`POST`, `PUT`, `PATCH`, `DELETE`…) that succeed remove the entries of
///   their URL and of their `Location`/`Content-Location` on the same origin, for their own
///   credential and for anonymous calls; answers stored for other credentials stay until they are
///   stale, as in each user's own private cache.
/// - **Redirects:** an answer reached through a redirect never creates, refreshes (a `304`) or
///   invalidates an entry.
///
/// - **A storage that does not answer** (a database that hangs) never holds a call: all the
///   waits of one pass through this step together (a lookup, then a store, refresh or removal)
///   last at most ``storageTimeout``, and each at most half the time the call has left (the other
///   half is the network's). A lookup that does not answer in time is a miss; a store, refresh or
///   removal is skipped. Each is logged at debug level (`resourceful.cache`: `storage-timeout`).
/// - **Redaction:** an answer from the cache (a hit, a revalidated entry) carries the byte cap,
///   deadline and redaction switches of the request as the steps before left them, as an answer
///   from the transport does: a body a request asks never to log is not logged or recorded
///   because the cache answered. A redaction switch that a step after this one set when the
///   answer was stored is remembered with its entry, in this step's memory (for at most
///   ``rememberedRedactions`` entries; past them every answer from the cache is redacted), and
///   applies to the answers served from it: a hit is never logged in clear where the first
///   answer was redacted. An entry another instance stored in a shared storage is served under
///   this call's own switches.
///
/// Each lookup is logged at debug level (`resourceful.cache`: `hit`, `miss`, `revalidated`,
/// `bypass`) and counted in `resourceful.cache` with the dimension `result`.
public struct HTTPCacheMiddleware: APIMiddleware {
    /// The label of the lookup counter.
    package static let metricLabel = "resourceful.cache"

    private let storage: any HTTPCacheStorage
    private let factory: (any MetricsFactory)?
    private let now: @Sendable () -> Date
    /// The key of the digests credentials are filed under.
    private let digestKey: HTTPCacheDigestKey
    /// The longest the storage is waited for in one pass through this step, all its answers
    /// together (and each never more than half the time the call has left): a lookup that takes
    /// longer is a miss, a store is skipped.
    public let storageTimeout: Duration
    /// How many entries' redaction switches set after this step are remembered: past that, every
    /// answer from the cache is redacted, so that none is shown in clear by mistake.
    public static let rememberedRedactions = 10_000
    /// The redaction switches set after this step when each entry (by its storage key) was
    /// stored, shared by the copies of this step.
    private let redactions = Locked(RememberedRedactions())

    /// A cache keeping its entries in `storage`.
    ///
    /// - Parameters:
    ///   - storage: where entries are kept.
    ///   - digestKey: the key of the digests credentials are filed under: this process's own
    ///     random key by default, so that entries stored by another process are misses; the same
    ///     secret key on every instance of a fleet that shares a persistent storage.
    ///   - storageTimeout: the longest wait for the storage in one pass through this step, all its
    ///     answers together, after which a lookup is a miss and a store is skipped (each wait
    ///     never more than half the time the call has left).
    public init(
        storage: any HTTPCacheStorage = InMemoryHTTPCacheStorage(),
        digestKey: HTTPCacheDigestKey = .processWide,
        storageTimeout: Duration = .seconds(1)
    ) {
        self.init(storage: storage, factory: nil, now: { Date() }, digestKey: digestKey, storageTimeout: storageTimeout)
    }

    /// A cache recording through `factory` (the bootstrapped one when `nil`), with the time from
    /// `now`.
    package init(
        storage: any HTTPCacheStorage,
        factory: (any MetricsFactory)?,
        now: @escaping @Sendable () -> Date,
        digestKey: HTTPCacheDigestKey = .processWide,
        storageTimeout: Duration = .seconds(1)
    ) {
        self.storage = storage
        self.factory = factory
        self.now = now
        self.digestKey = digestKey
        self.storageTimeout = storageTimeout
    }

    /// Answers `request` from the cache, revalidates it, or passes it on and keeps the answer.
    public func intercept(
        _ request: TransportRequest,
        context: CallContext,
        next: (TransportRequest, CallContext) async throws -> TransportResponse
    ) async throws -> TransportResponse {
        let redactor = context.options.redactor
        let digestKey = digestKey
        let key = CacheKey(request, redactor: redactor, digestKey: digestKey)
        guard CachePolicy.isCacheable(request.method) else {
            let response = try await next(request, context)
            if CachePolicy.isUnsafe(request.method), (200..<400).contains(response.status.code), response.redirects.isEmpty {
                try await invalidate(key, request: request, response: response, context: context)
            }
            return response
        }
        // A request with conditions of its own is the caller's to answer; a stream (a download,
        // events, lines) is read once, as it arrives, and is never stored or served from here.
        if request.streamsResponseBody || request.headerFields[.ifNoneMatch] != nil || request.headerFields[.ifModifiedSince] != nil
            || CacheControl(request.headerFields).has("no-store")
        {
            record("bypass", context)
            return try await next(request, context)
        }
        // One budget for every wait on the storage in this call (``storageTimeout``), so that a
        // storage answering each step just in time holds the call once, not once per step.
        var budget = StorageBudget(remaining: storageTimeout)
        let found = try await bounded("lookup", request: request, context: context, budget: &budget) { storage in
            await storage.entry(forKey: key.storageKey)
        }
        var stored = found ?? nil
        if let entry = stored, !Self.varies(entry, matching: request, redactor: redactor, digestKey: digestKey) {
            stored = nil
        }
        if let entry = stored, CachePolicy.isFresh(entry, for: request, now: now()) {
            record("hit", context)
            var fields = entry.headerFields
            // Clamped: a stored entry's times are not trusted to be sane.
            fields[.age] = String(Int(Swift.min(Swift.max(CachePolicy.age(entry, now: now()), 0), Double(Int32.max))))
            // No transport answers: the call collects (and the logging step shows) this body
            // under the cap, deadline and redaction switches the steps before left.
            var answer = TransportResponse(status: entry.status, headerFields: fields, body: entry.body)
            answer.collectionLimits = Self.limits(of: request, and: nil)
            let remembered = redactions.withLock { $0.switches(forKey: key.storageKey) }
            answer.collectionLimits?.redactsRequestBody = request.shouldRedactRequestBody || remembered.request
            answer.collectionLimits?.redactsResponseBody = request.shouldRedactResponseBody || remembered.response
            answer.servedFromCache = true
            return answer
        }
        var conditional = request
        if let entry = stored {
            if let tag = entry.headerFields[.eTag] { conditional.headerFields[.ifNoneMatch] = tag }
            if let modified = entry.headerFields[.lastModified] { conditional.headerFields[.ifModifiedSince] = modified }
        }
        let sent = now()
        let response = try await next(conditional, context)
        let received = now()
        // An answer from another URL says nothing of this one's entry.
        if !response.redirects.isEmpty {
            record("miss", context)
            return response
        }
        if response.status.code == 304, let snapshot = stored {
            // RFC 9111 §4.3.4: the 304 updates the stored response its validator names (the one
            // it sent, when it names none), as stored now: a newer response stored while it was
            // on its way stays. The caller gets the response it revalidated.
            let validator = CachePolicy.validator(of: response.headerFields) ?? CachePolicy.validator(of: snapshot.headerFields)
            let refreshed = { @Sendable (entry: HTTPCacheEntry) in Self.refreshed(entry, by: response, sent: sent, received: received) }
            let updated = try await bounded("refresh", request: request, context: context, budget: &budget) { storage in
                await storage.updateEntry(forKey: key.storageKey) { current in
                    guard let current, validator != nil, CachePolicy.validator(of: current.headerFields) == validator,
                        Self.varies(current, matching: request, redactor: redactor, digestKey: digestKey)
                    else { return nil }
                    return Self.withoutCredentials(refreshed(current), redactor: redactor)
                }
            }
            record("revalidated", context)
            let entry = refreshed((updated ?? nil) ?? snapshot)
            var answer = TransportResponse(status: entry.status, headerFields: entry.headerFields, body: entry.body)
            answer.collectionLimits = Self.limits(of: request, and: response.collectionLimits)
            // Its fields are the stored answer's, not what the upstream says of its limits now.
            answer.servedFromCache = true
            return answer
        }
        record("miss", context)
        let storesAuthorized = context.options.storesAuthorizedResponses
        if let body = response.body.bytes,
            CachePolicy.refusal(request, response, isCredentialed: key.isCredentialed, storesAuthorizedResponses: storesAuthorized) == nil
        {
            let names = CachePolicy.varyingNames(response.headerFields) ?? []
            let switches = (request: response.collectionLimits?.redactsRequestBody == true, response: response.collectionLimits?.redactsResponseBody == true)
            redactions.withLock { $0.remember(switches, forKey: key.storageKey) }
            let entry = HTTPCacheEntry(
                status: response.status, headerFields: Self.withoutCredentials(response.headerFields, redactor: redactor), body: body,
                requestTime: sent, responseTime: received,
                varyingFields: CachePolicy.values(of: names, in: request.headerFields, redactor: redactor, digestKey: digestKey)
            )
            // A late answer older than the stored one (by the server's `Date`) does not replace
            // it: RFC 9111 §4 uses the most recent response.
            _ = try await bounded("store", request: request, context: context, budget: &budget) { storage in
                await storage.updateEntry(forKey: key.storageKey) { current in
                    if let current, let stored = current.headerFields[.date].flatMap(HTTPDate.parse),
                        let arrived = entry.headerFields[.date].flatMap(HTTPDate.parse), arrived < stored
                    {
                        return nil
                    }
                    return entry
                }
            }
        } else if response.status.code < 500 {
            try await bounded("remove", request: request, context: context, budget: &budget) { storage in
                await storage.removeEntry(forKey: key.storageKey)
            }
        }
        return response
    }

    /// Whether `request` has the values of the fields `entry` varies on.
    private static func varies(
        _ entry: HTTPCacheEntry, matching request: TransportRequest, redactor: Redactor, digestKey: HTTPCacheDigestKey
    ) -> Bool {
        entry.varyingFields
            == CachePolicy.values(of: Array(entry.varyingFields.keys), in: request.headerFields, redactor: redactor, digestKey: digestKey)
    }

    /// `fields` without those that can carry a credential (`Set-Cookie`, an `X-Auth-Token` the
    /// server hands out): a storage never holds one, and a later call is not given it again.
    private static func withoutCredentials(_ fields: HTTPFields, redactor: Redactor) -> HTTPFields {
        fields.filter { !redactor.masksHeader($0.name.canonicalName) }
    }

    private static func withoutCredentials(_ entry: HTTPCacheEntry, redactor: Redactor) -> HTTPCacheEntry {
        var entry = entry
        entry.headerFields = withoutCredentials(entry.headerFields, redactor: redactor)
        return entry
    }

    /// `entry` with what a `304` says of it now: its fields (but those describing a body) and
    /// the times of the exchange.
    private static func refreshed(_ entry: HTTPCacheEntry, by response: TransportResponse, sent: Date, received: Date) -> HTTPCacheEntry {
        var entry = entry
        for field in response.headerFields where ![.contentLength, .transferEncoding, .contentEncoding].contains(field.name) {
            entry.headerFields[field.name] = field.value
        }
        entry.requestTime = sent
        entry.responseTime = received
        return entry
    }

    /// Removes the entries of `key` (for its credential and for anonymous calls), and those of
    /// the `Location` and `Content-Location` of `response` on its origin.
    private func invalidate(_ key: CacheKey, request: TransportRequest, response: TransportResponse, context: CallContext) async throws {
        var keys = [key.storageKey, key.anonymousKey]
        if let base = URL(string: request.url) {
            for name in [HTTPField.Name.location, .contentLocation] {
                guard let value = response.headerFields[name], let target = URL(string: value, relativeTo: base)?.absoluteURL,
                    Origin.same(target, base)
                else { continue }
                let targetKey = CacheKey(
                    target: RequestTarget(parsing: target.absoluteString), headerFields: request.headerFields,
                    redactor: context.options.redactor, digestKey: digestKey
                )
                keys += [targetKey.storageKey, targetKey.anonymousKey]
            }
        }
        var budget = StorageBudget(remaining: storageTimeout)
        try await bounded("remove", request: request, context: context, budget: &budget) { [keys] storage in
            for key in keys { await storage.removeEntry(forKey: key) }
        }
    }

    /// What is left of the time one call may wait for the storage, over all its steps.
    private struct StorageBudget {
        var remaining: Duration
    }

    /// The byte cap, deadline and redaction switches of `request` (as the steps before this one
    /// left them), joined with those a transport's answer came back with: the switches of either
    /// redact, the smaller cap and the earlier deadline hold. A response this step makes (a hit,
    /// a revalidated entry) carries them, so that a body a request asked never to show is not
    /// shown because the cache answered.
    private static func limits(
        of request: TransportRequest, and transport: TransportResponse.CollectionLimits?
    ) -> TransportResponse.CollectionLimits {
        var limits = TransportResponse.CollectionLimits(
            maxBytes: request.maxResponseBytes,
            deadline: request.deadline,
            redactsRequestBody: request.shouldRedactRequestBody,
            redactsResponseBody: request.shouldRedactResponseBody
        )
        if let transport {
            limits.maxBytes = min(limits.maxBytes, transport.maxBytes)
            limits.deadline = min(limits.deadline, transport.deadline)
            limits.redactsRequestBody = limits.redactsRequestBody || transport.redactsRequestBody
            limits.redactsResponseBody = limits.redactsResponseBody || transport.redactsResponseBody
        }
        return limits
    }

    /// What `body` gets from the storage, or `nil` when the storage does not answer in time: within
    /// what is left of the call's `budget` (``storageTimeout`` for all the waits of one call
    /// together, each wait spending what it took) and within half the time the call has left,
    /// whichever ends first. The call goes on without it (a miss, a skipped store), and a debug
    /// line says so; once the budget is spent, the storage is not asked again in this call. The
    /// storage of this package answers from memory and is asked directly; any other is asked in a
    /// task of its own, left to end on its own when it does not answer in time.
    ///
    /// - Throws: ``APIError/Kind/cancelled`` when the call is cancelled while it waits.
    @discardableResult
    private func bounded<T: Sendable>(
        _ operation: String,
        request: TransportRequest,
        context: CallContext,
        budget: inout StorageBudget,
        _ body: @escaping @Sendable (any HTTPCacheStorage) async -> T
    ) async throws -> T? {
        let storage = storage
        if storage is InMemoryHTTPCacheStorage { return await body(storage) }
        let now = ContinuousClock.now
        let limit = min(now + budget.remaining, now + (request.deadline - now) / 2)
        do {
            guard limit > now else { throw APIError.timedOut() }
            defer { budget.remaining -= ContinuousClock.now - now }
            return try await Deadline.run(until: limit) { await body(storage) }
        } catch let error as APIError where error.kind == .timeout {
            context.logger.debug(
                "HTTP cache storage did not answer in time",
                metadata: [
                    "resourceful.request-id": .string(context.requestID),
                    "resourceful.path": .string(Self.path(context)),
                    "resourceful.cache": .string("storage-timeout"),
                    "resourceful.cache-operation": .string(operation),
                ]
            )
            return nil
        }
    }

    /// The call's path as log lines show it: an encoded URL in a segment without its userinfo,
    /// masked path parameters replaced.
    private static func path(_ context: CallContext) -> String {
        context.options.redactor.maskedURL("/" + context.target.path)
    }

    private func record(_ result: String, _ context: CallContext) {
        context.logger.debug(
            "HTTP cache",
            metadata: [
                "resourceful.request-id": .string(context.requestID),
                "resourceful.path": .string(Self.path(context)),
                "resourceful.cache": .string(result),
            ]
        )
        let factory = factory ?? MetricsSystem.factory
        if factory is NOOPMetricsHandler { return }
        Counter(label: Self.metricLabel, dimensions: [("result", result)], factory: factory).increment()
    }
}

/// The redaction switches a step after the cache set when each entry was stored, by storage key:
/// only keys with a switch set are kept, at most ``HTTPCacheMiddleware/rememberedRedactions``;
/// past that, every key counts as redacted (failing closed).
private struct RememberedRedactions: Sendable {
    var switches: [String: (request: Bool, response: Bool)] = [:]
    var overflowed = false

    /// Remembers `switches` for `key`, or forgets it when neither is set.
    mutating func remember(_ value: (request: Bool, response: Bool), forKey key: String) {
        guard value.request || value.response else {
            switches[key] = nil
            return
        }
        if switches[key] == nil, switches.count >= HTTPCacheMiddleware.rememberedRedactions {
            overflowed = true
            return
        }
        switches[key] = value
    }

    /// The switches remembered for `key`: both set once too many were remembered.
    func switches(forKey key: String) -> (request: Bool, response: Bool) {
        if overflowed { return (true, true) }
        return switches[key] ?? (false, false)
    }
}
