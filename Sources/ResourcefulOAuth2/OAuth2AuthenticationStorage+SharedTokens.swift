import Foundation
import Resourceful

extension OAuth2AuthenticationStorage {
    /// A `client_credentials` token shared by the fleet: the one another instance kept, else one
    /// asked for under the fleet's lease and kept for the others.
    func sharedToken(
        from cache: any SharedTokenCache,
        for service: String,
        endpoints: OAuth2Endpoints,
        deadline: ContinuousClock.Instant,
        replacing refused: String?
    ) async throws -> Token {
        try await leased(.clientCredentials, from: cache, for: service, endpoints: endpoints, deadline: deadline, replacing: refused) {
            [self] in
            try await request([("grant_type", "client_credentials")], endpoints: endpoints, deadline: deadline)
        }
    }

    /// A `refresh_token` grant's token shared by the fleet: the one another instance kept, else
    /// the stored refresh token spent under the fleet's lease (no other instance spends it
    /// meanwhile), its rotated successor written only over it (``RotatingSecretStorage``).
    func sharedRenewal(
        from cache: any SharedTokenCache,
        for service: String,
        storage: any WritableSecretStorage,
        endpoints: OAuth2Endpoints,
        deadline: ContinuousClock.Instant,
        epoch: UInt64,
        replacing refused: String?
    ) async throws -> Token {
        try await leased(.refreshToken, from: cache, for: service, endpoints: endpoints, deadline: deadline, replacing: refused) {
            [self] in
            // Not a lock file's hold: the lease is the fleet's, held by the cache.
            let hold = LockHold.notHeld("the fleet's lease is held instead")
            guard let token = try await renew(service: service, storage: storage, endpoints: endpoints, deadline: deadline, epoch: epoch, lock: hold)
            else { throw Self.lockLost(service) }
            return token
        }
    }

    /// The token of `grant` for `service` another instance kept (unless it is `refused`), else
    /// the one `fetch` gets under the fleet's lease, kept for the others.
    private func leased(
        _ grant: OAuth2Settings.Grant,
        from cache: any SharedTokenCache,
        for service: String,
        endpoints: OAuth2Endpoints,
        deadline: ContinuousClock.Instant,
        replacing refused: String?,
        fetch: @escaping @Sendable () async throws -> Token
    ) async throws -> Token {
        let name = Self.sharedTokenName(settings: settings, endpoints: endpoints, grant: grant, service: service)
        if refused == nil, let kept = await cache.token(named: name, deadline: deadline) {
            return Token(kept)
        }
        let kept = try await cache.withLease(named: name, refusing: refused.flatMap { $0.isEmpty ? nil : $0 }, deadline: deadline) {
            let token = try await fetch()
            return SharedToken(header: token.header, renewIn: token.renewAt - .now, expiresAt: token.expiresAt, scope: token.scope)
        }
        return Token(kept)
    }

    /// What a shared token is for: the grant, the token endpoint, the client, the scopes,
    /// audience and resource asked for, and the service it is sent to (two services with one
    /// client never share a token: the token one got with its own secret is not sent to the
    /// other's server) — never a secret.
    static func sharedTokenName(settings: OAuth2Settings, endpoints: OAuth2Endpoints, grant: OAuth2Settings.Grant, service: String) -> String {
        let parts = [
            "oauth2 \(grant.rawValue)", endpoints.token.absoluteString, settings.clientID, settings.scopes.sorted().joined(separator: " "),
            settings.audience ?? "", settings.resource ?? "", service,
        ]
        return parts.map { "\($0.utf8.count):\($0)" }.joined(separator: "|")
    }
}

extension OAuth2AuthenticationStorage.Token {
    /// A token a fleet's cache kept.
    ///
    /// What another instance kept is held to the lifetime a token answer may have, and to its
    /// expiry: a row altered to live for ever is renewed as any token is.
    init(_ shared: SharedToken) {
        var renewIn = Swift.min(shared.renewIn, .seconds(TokenResponse.maximumLifetime))
        if let expiresAt = shared.expiresAt {
            renewIn = Swift.min(renewIn, .seconds(Swift.max(expiresAt.timeIntervalSinceNow, 0)))
        }
        self.init(header: shared.header, renewAt: .now + renewIn, expiresAt: shared.expiresAt, scope: shared.scope)
    }
}
