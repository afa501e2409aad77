import Foundation
import Resourceful
import ResourcefulOAuth2
import ResourcefulTesting
import Testing

/// An app's own refresh-token store that fails: its error reaches the caller as it threw it.
@Suite struct StorageErrorIdentityTests {
    struct StoreDown: Error, Equatable {
        let code: Int
    }

    /// Holds one refresh token; its claims fail.
    struct FailingClaims: RotatingSecretStorage {
        func secret(named name: String) async throws -> String? { "rt-identity" }
        func storeSecret(_ secret: String, named name: String) async throws {}
        func deleteSecret(named name: String) async throws -> Bool { false }
        func replaceSecret(named name: String, spent: String, with new: String) async throws -> Bool { false }
        func claimSecret(named name: String, spending secret: String, until deadline: ContinuousClock.Instant) async throws -> SecretClaim {
            throw StoreDown(code: 7)
        }
        func releaseClaim(named name: String, spending secret: String) async {}
    }

    @Test func aStoresOwnErrorKeepsItsIdentity() async throws {
        try await MockServer.withTransport { server, transport in
            let settings = OAuth2Settings(clientID: "c", tokenEndpoint: server.baseURL.appendingPathComponent("token"), grant: .refreshToken)
            let storage = try await OAuth2AuthenticationStorage(
                settings: settings, transport: transport, clientSecret: InMemorySecrets(["c-client-secret": "s"]), refreshTokens: FailingClaims())
            let thrown = await #expect(throws: OAuth2Error.self) { _ = try await storage.refreshCredential(for: "svc") }
            #expect(thrown?.kind == .unreachable)
            #expect(thrown?.underlying as? StoreDown == StoreDown(code: 7))
            // Nothing was spent: no token request went out.
            #expect(server.requests.isEmpty)
        }
    }
}
