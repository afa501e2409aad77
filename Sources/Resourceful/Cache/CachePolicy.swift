import Foundation
import HTTPTypes

/// RFC 9111's rules as a private cache of an API client applies them.
enum CachePolicy {
    /// Statuses a response may be stored with (RFC 9110 §15.1's heuristically cacheable ones).
    static let storableStatuses: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]

    /// Whether a request with `method` may be answered from the cache.
    static func isCacheable(_ method: HTTPRequest.Method) -> Bool {
        method == .get
    }

    /// Whether a request with `method` changes state, so that a success invalidates its URL.
    static func isUnsafe(_ method: HTTPRequest.Method) -> Bool {
        ![.get, .head, .options, .trace].contains(method)
    }

    /// Why `response` to `request` may not be stored, or `nil` when it may; `isCredentialed` is
    /// whether the request carries a credential (``CacheKey``), under whose digest it is stored.
    static func refusal(
        _ request: TransportRequest,
        _ response: TransportResponse,
        isCredentialed: Bool,
        storesAuthorizedResponses: Bool
    ) -> String? {
        let requestControl = CacheControl(request.headerFields)
        let responseControl = CacheControl(response.headerFields)
        guard isCacheable(request.method) else { return "method" }
        guard storableStatuses.contains(response.status.code) else { return "status" }
        // The answer of another URL, reached through a redirect that may change.
        if !response.redirects.isEmpty { return "redirect" }
        if requestControl.has("no-store") || responseControl.has("no-store") { return "no-store" }
        if varyingNames(response.headerFields) == nil { return "vary" }
        // Meant for one user, and nothing in the request says which.
        if responseControl.has("private"), !isCredentialed { return "private" }
        if isCredentialed, !storesAuthorizedResponses,
            !(responseControl.has("public") || responseControl.has("must-revalidate") || responseControl.has("s-maxage"))
        {
            return "authorization"
        }
        let hasFreshness = responseControl.has("max-age") || response.headerFields[.expires] != nil
        let hasValidator = response.headerFields[.eTag] != nil || response.headerFields[.lastModified] != nil
        return hasFreshness || hasValidator ? nil : "no freshness or validator"
    }

    /// The lower-cased names `Vary` lists; `nil` for `Vary: *`, which nothing matches.
    static func varyingNames(_ fields: HTTPFields) -> [String]? {
        var names: [String] = []
        for value in fields[values: .vary] {
            for name in value.split(separator: ",") {
                let trimmed = name.trimmingCharacters(in: .whitespaces).lowercased()
                if trimmed == "*" { return nil }
                if !trimmed.isEmpty { names.append(trimmed) }
            }
        }
        return names
    }

    /// The request's values of `names`; the value of a field that can carry a credential (one
    /// `redactor` masks) as its keyed digest (`hmac-sha256:` and 64 hex digits, with
    /// `digestKey`), never as it is.
    static func values(
        of names: [String], in fields: HTTPFields, redactor: Redactor, digestKey: HTTPCacheDigestKey = .processWide
    ) -> [String: String] {
        var values: [String: String] = [:]
        for name in names {
            let value = HTTPField.Name(name).map { fields[values: $0].joined(separator: ", ") } ?? ""
            values[name] = redactor.masksHeader(name) ? "hmac-sha256:" + digestKey.digest(value) : value
        }
        return values
    }

    /// The validator that names the response `fields` describe: its `ETag`, else its
    /// `Last-Modified`; `nil` when it has neither.
    static func validator(of fields: HTTPFields) -> String? {
        if let tag = fields[.eTag] { return "etag " + tag }
        return fields[.lastModified].map { "last-modified " + $0 }
    }

    /// How long `entry` stays fresh, from `max-age` or `Expires`; `nil` when it says neither.
    static func freshnessLifetime(_ entry: HTTPCacheEntry) -> TimeInterval? {
        let control = CacheControl(entry.headerFields)
        if let maxAge = control.seconds("max-age") { return TimeInterval(maxAge) }
        guard let expires = entry.headerFields[.expires] else { return nil }
        // An invalid date, such as `0`, means already expired.
        guard let expiry = HTTPDate.parse(expires) else { return 0 }
        let date = entry.headerFields[.date].flatMap(HTTPDate.parse) ?? entry.responseTime
        return expiry.timeIntervalSince(date)
    }

    /// The entry's current age (RFC 9111 §4.2.3).
    static func age(_ entry: HTTPCacheEntry, now: Date) -> TimeInterval {
        let date = entry.headerFields[.date].flatMap(HTTPDate.parse) ?? entry.responseTime
        let apparentAge = max(0, entry.responseTime.timeIntervalSince(date))
        let ageValue = entry.headerFields[.age].flatMap { TimeInterval($0) } ?? 0
        let responseDelay = entry.responseTime.timeIntervalSince(entry.requestTime)
        let initialAge = max(apparentAge, ageValue + responseDelay)
        return initialAge + now.timeIntervalSince(entry.responseTime)
    }

    /// Whether `entry` may answer `request` without asking the server.
    static func isFresh(_ entry: HTTPCacheEntry, for request: TransportRequest, now: Date) -> Bool {
        let requestControl = CacheControl(request.headerFields)
        let responseControl = CacheControl(entry.headerFields)
        if requestControl.has("no-cache") || responseControl.has("no-cache") { return false }
        guard let lifetime = freshnessLifetime(entry) else { return false }
        let age = age(entry, now: now)
        if let maxAge = requestControl.seconds("max-age"), age > TimeInterval(maxAge) { return false }
        return lifetime > age
    }
}
