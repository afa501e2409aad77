public import Foundation
public import HTTPTypes
public import NIOCore

/// Where ``HTTPCacheMiddleware`` keeps responses: ``InMemoryHTTPCacheStorage``, or a store the
/// app already runs. One entry per key: a key is an absolute URL (masked query values replaced by
/// `***`), followed, for an answer to a credentialed request, by a space and a digest of the
/// credential (`… credential:hmac-sha256:…`, see ``HTTPCacheDigestKey``). Keys never hold a
/// secret.
public protocol HTTPCacheStorage: Sendable {
    /// The entry stored for `key`, if any; a storage that evicts by use counts this as a use.
    func entry(forKey key: String) async -> HTTPCacheEntry?
    /// Stores `entry` for `key`, replacing what was there.
    func store(_ entry: HTTPCacheEntry, forKey key: String) async
    /// Forgets the entry for `key`.
    func removeEntry(forKey key: String) async
    /// Replaces the entry for `key` with what `update` makes of the entry stored now (`nil` when
    /// there is none), or leaves it when `update` gives `nil`; returns what it stored. `update`
    /// may be called more than once, each time with the entry stored then.
    ///
    /// ``HTTPCacheMiddleware`` stores and refreshes entries this way, so that a late answer
    /// about an older response never overwrites a newer one stored meanwhile (RFC 9111 §4.3.4).
    /// A storage shared by many calls or processes does the read and the write as one step
    /// (under its lock, in one transaction, a compare-and-set on a version), as
    /// ``InMemoryHTTPCacheStorage`` does. The default implementation cannot: it reads, computes,
    /// then reads again and stores only when the entry is still the one `update` saw, else it
    /// starts again from the newer one (a few times, then leaves the entry as it is). So a store
    /// that comes between its first read and its write is never lost; only one that comes
    /// between its second read and its write, a much shorter moment, can be.
    func updateEntry(forKey key: String, _ update: (HTTPCacheEntry?) -> HTTPCacheEntry?) async -> HTTPCacheEntry?
}

extension HTTPCacheStorage {
    /// Reads the entry for `key`, makes its update, and stores it only when a second read finds
    /// the entry `update` saw (it starts again from a newer one, at most three times, then
    /// leaves the entry as it is and returns `nil`): for storages that cannot do the read and the
    /// write as one step. A cache entry left as it is costs a revalidation at worst; one written
    /// over a newer one would be served stale.
    public func updateEntry(forKey key: String, _ update: (HTTPCacheEntry?) -> HTTPCacheEntry?) async -> HTTPCacheEntry? {
        var seen = await entry(forKey: key)
        for _ in 0..<3 {
            guard let updated = update(seen) else { return nil }
            let current = await entry(forKey: key)
            guard current == seen else {
                // Another call stored meanwhile: the update is made again from what it stored.
                seen = current
                continue
            }
            await store(updated, forKey: key)
            return updated
        }
        return nil
    }
}

/// A stored response and what its freshness is computed from (RFC 9111); two entries are equal
/// when every part of them is.
public struct HTTPCacheEntry: Sendable, Equatable {
    /// The response's status.
    public var status: HTTPResponse.Status
    /// The response's header fields.
    public var headerFields: HTTPFields
    /// The response's body.
    public var body: ByteBuffer
    /// When the request that got it was sent.
    public var requestTime: Date
    /// When the response arrived.
    public var responseTime: Date
    /// The request's values of the fields the response's `Vary` names, by lower-cased name
    /// (`""` for a field the request did not have). The value of a field that can carry a
    /// credential (`Authorization`, `Cookie`, any field the redaction rules mask) is kept only as
    /// its keyed digest (`hmac-sha256:` and 64 hex digits, see ``HTTPCacheDigestKey``), so that no
    /// storage holds a secret, nor a digest that a dictionary could be tried against.
    public var varyingFields: [String: String]

    /// Creates an entry.
    public init(
        status: HTTPResponse.Status,
        headerFields: HTTPFields,
        body: ByteBuffer,
        requestTime: Date,
        responseTime: Date,
        varyingFields: [String: String] = [:]
    ) {
        self.status = status
        self.headerFields = headerFields
        self.body = body
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.varyingFields = varyingFields
    }

    /// The bytes it takes: body, field names and values, and the request values it varies on.
    public var size: Int {
        body.readableBytes + headerFields.reduce(0) { $0 + $1.name.rawName.utf8.count + $1.value.utf8.count }
            + varyingFields.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
    }
}
