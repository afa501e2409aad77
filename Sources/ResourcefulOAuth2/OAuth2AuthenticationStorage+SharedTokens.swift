import Foundation
import Resourceful

extension OAuth2AuthenticationStorage {
    /// A `client_credentials` token shared by the fleet: the one another instance kept, else one
    /// asked for under the fleet's lease and kept for the others (else `backingOff`, thrown).
    func sharedToken(
        from cache: any SharedTokenCache,
        for service: String,
        endpoints: OAuth2Endpoints,
        deadline: ContinuousClock.Instant,
        replacing refused: String?,
        backingOff: OAuth2Error?
    ) async throws -> Token {
        try await leased(
            .clientCredentials, from: cache, for: service, endpoints: endpoints, deadline: deadline, replacing: refused, backingOff: backingOff
        ) {
            [self] in
            try await request([("grant_type", "client_credentials")], endpoints: endpoints, deadline: deadline)
        }
    }

    /// A `refresh_token` grant's token shared by the fleet: the one another instance kept, else
    /// the stored refresh token spent under the fleet's lease (no other instance spends it
    /// meanwhile), its rotated successor written only over it (``RotatingSecretStorage``); else
    /// `backingOff`, thrown.
    func sharedRenewal(
        from cache: any SharedTokenCache,
        for service: String,
        storage: any WritableSecretStorage,
        endpoints: OAuth2Endpoints,
        deadline: ContinuousClock.Instant,
        epoch: UInt64,
        replacing refused: String?,
        backingOff: OAuth2Error?
    ) async throws -> Token {
        try await leased(
            .refreshToken, from: cache, for: service, endpoints: endpoints, deadline: deadline, replacing: refused, backingOff: backingOff
        ) {
            [self] in
            // Not a lock file's hold: the lease is the fleet's, held by the cache.
            let hold = LockHold.notHeld("the fleet's lease is held instead")
            guard let token = try await renew(service: service, storage: storage, endpoints: endpoints, deadline: deadline, epoch: epoch, lock: hold)
            else { throw Self.lockLost(service) }
            return token
        }
    }

    /// `refreshToken`, or the token that replaced it, claimed for this renewal in `storage`
    /// (``RotatingSecretStorage/claimSecret(named:spending:until:)``); `nil` when none is stored.
    /// While another instance spends it, waits (polling, less often as the wait grows) for its
    /// successor or for its claim to run out, within `deadline`.
    func claim(
        _ refreshToken: String, of service: String, in storage: any RotatingSecretStorage, deadline: ContinuousClock.Instant
    ) async throws(OAuth2Error) -> String? {
        let name = Self.refreshTokenName(service: service)
        var token = refreshToken
        var pause = Duration.milliseconds(20)
        while true {
            let found: SecretClaim
            do {
                found = try await storage.claimSecret(named: name, spending: token, until: deadline)
            } catch {
                throw OAuth2Error(.unreachable, "the refresh token of '\(service)' could not be claimed: \(Self.describe(error))", underlying: error)
            }
            switch found {
            case .claimed:
                return token
            case .replaced:
                let current: String?
                do {
                    current = try await storage.secret(named: name)
                } catch {
                    throw OAuth2Error(.unreachable, "the refresh token of '\(service)' could not be read: \(Self.describe(error))", underlying: error)
                }
                guard let current, !current.isEmpty else { return nil }
                token = current
                continue
            case .heldElsewhere:
                break
            }
            guard ContinuousClock.now + pause < deadline else {
                throw OAuth2Error(
                    .unreachable,
                    "another instance was spending the refresh token of '\(service)' until the call's deadline: nothing was spent; try again")
            }
            do {
                try await Task.sleep(for: pause)
            } catch {
                throw OAuth2Error(.unreachable, "the renewal of '\(service)' was cancelled", underlying: error)
            }
            pause = Swift.min(pause * 2, .milliseconds(500))
        }
    }

    /// The token of `grant` for `service` another instance kept (unless it is `refused`), else
    /// the one `fetch` gets under the fleet's lease, kept for the others; while `backingOff` from
    /// a refusal, no lease is taken and nothing asked: `backingOff` is thrown.
    private func leased(
        _ grant: OAuth2Settings.Grant,
        from cache: any SharedTokenCache,
        for service: String,
        endpoints: OAuth2Endpoints,
        deadline: ContinuousClock.Instant,
        replacing refused: String?,
        backingOff: OAuth2Error?,
        fetch: @escaping @Sendable () async throws -> Token
    ) async throws -> Token {
        let name = Self.sharedTokenName(settings: settings, endpoints: endpoints, grant: grant, service: service)
        // Backing off, any kept token but the one a `401` refused will do: the server is not asked.
        if refused == nil || backingOff != nil, let kept = await cache.token(named: name, deadline: deadline),
            refused.map({ $0.isEmpty || $0 != kept.header }) ?? true
        {
            return Token(kept)
        }
        if let backingOff { throw backingOff }
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
