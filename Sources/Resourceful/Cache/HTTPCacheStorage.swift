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
    /// there is none), or leaves it when `update` gives `nil`; returns what it stored.
    ///
    /// ``HTTPCacheMiddleware`` refreshes an entry with a `304` this way, so that a late answer
    /// about an older response never overwrites a newer one stored meanwhile (RFC 9111 §4.3.4).
    /// The default reads, then stores: a storage shared by many calls or processes should do both
    /// as one step (under its lock, in one transaction), as ``InMemoryHTTPCacheStorage`` does.
    func updateEntry(forKey key: String, _ update: (HTTPCacheEntry?) -> HTTPCacheEntry?) async -> HTTPCacheEntry?
}

extension HTTPCacheStorage {
    /// Reads the entry for `key`, then stores what `update` makes of it, if anything: two steps,
    /// for storages that cannot do one.
    public func updateEntry(forKey key: String, _ update: (HTTPCacheEntry?) -> HTTPCacheEntry?) async -> HTTPCacheEntry? {
        guard let updated = update(await entry(forKey: key)) else { return nil }
        await store(updated, forKey: key)
        return updated
    }
}

/// A stored response and what its freshness is computed from (RFC 9111).
public struct HTTPCacheEntry: Sendable {
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
