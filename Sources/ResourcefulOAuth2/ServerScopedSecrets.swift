import Foundation
import Resourceful

/// A ``RotatingSecretStorage`` a fleet shares, its names scoped to one authorization server and
/// client: two deployments sharing one store (and one sealing key) with one service name but
/// different servers never read each other's refresh tokens, nor send one server's token to
/// the other.
struct ServerScopedSecrets: RotatingSecretStorage {
    let inner: any RotatingSecretStorage
    /// What the names are scoped to: the issuer (else the token endpoint) and the client.
    let scope: String

    init(_ inner: any RotatingSecretStorage, settings: OAuth2Settings) {
        self.inner = inner
        scope = Self.scope(settings)
    }

    /// `<length>:<server>|<length>:<client>|`: the issuer or token endpoint and the client ID.
    static func scope(_ settings: OAuth2Settings) -> String {
        let server = settings.issuer?.absoluteString ?? settings.tokenEndpoint?.absoluteString ?? ""
        return [server, settings.clientID].map { "\($0.utf8.count):\($0)|" }.joined()
    }

    private func scoped(_ name: String) -> String { scope + name }

    func secret(named name: String) async throws -> String? { try await inner.secret(named: scoped(name)) }
    func storeSecret(_ secret: String, named name: String) async throws { try await inner.storeSecret(secret, named: scoped(name)) }
    func deleteSecret(named name: String) async throws -> Bool { try await inner.deleteSecret(named: scoped(name)) }
    func replaceSecret(named name: String, spent: String, with new: String) async throws -> Bool {
        try await inner.replaceSecret(named: scoped(name), spent: spent, with: new)
    }
    func claimSecret(named name: String, spending secret: String, until deadline: ContinuousClock.Instant) async throws -> SecretClaim {
        try await inner.claimSecret(named: scoped(name), spending: secret, until: deadline)
    }
    func releaseClaim(named name: String, spending secret: String) async { await inner.releaseClaim(named: scoped(name), spending: secret) }
    func abandonClaim(named name: String, spending secret: String) async { await inner.abandonClaim(named: scoped(name), spending: secret) }
}
