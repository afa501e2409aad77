public import Foundation

/// Access tokens a fleet of instances shares, so that the fleet asks the authorization server
/// once per token, not once per instance (such as `ResourcefulPostgres`'s `PostgresTokenCache`).
///
/// A token is named by what it is for (its token endpoint, client, scopes, audience and
/// resource), never by a secret. An implementation keeps tokens sealed, and holds a lease per
/// name that one instance at a time takes to ask for a new token, so that the others wait for
/// its answer instead of asking too; a lease whose holder dies ends with it.
public protocol SharedTokenCache: Sendable {
    /// The token kept under `name` while it is not yet due for renewal; `nil` when none is, or
    /// the store cannot say before `deadline`.
    func token(named name: String, deadline: ContinuousClock.Instant) async -> SharedToken?

    /// A token for `name` got under the fleet's lease: the one another instance kept while this
    /// one waited for the lease, unless it is due or is `refused` (a `401` said it is no longer
    /// good), else the one `fetch` brings, which is kept for the others.
    ///
    /// Throws what `fetch` throws, or the implementation's own error when the store cannot be
    /// used and it is set to fail rather than ask without the fleet.
    func withLease(
        named name: String,
        refusing refused: String?,
        deadline: ContinuousClock.Instant,
        fetch: @escaping @Sendable () async throws -> SharedToken
    ) async throws -> SharedToken
}

/// An access token as a ``SharedTokenCache`` keeps it.
public struct SharedToken: Sendable, Equatable {
    /// The `Authorization` value: `Bearer <token>`.
    public var header: String
    /// How long from now until it is due for renewal.
    public var renewIn: Duration
    /// When it expires, if the server said.
    public var expiresAt: Date?
    /// The scope the server granted, if it said.
    public var scope: String?

    /// A token with its `Authorization` value, due for renewal in `renewIn`.
    public init(header: String, renewIn: Duration, expiresAt: Date? = nil, scope: String? = nil) {
        self.header = header
        self.renewIn = renewIn
        self.expiresAt = expiresAt
        self.scope = scope
    }
}

extension SharedToken: CustomStringConvertible {
    /// The token's lifetime, never its value.
    public var description: String { "SharedToken(renewIn: \(renewIn))" }
}
