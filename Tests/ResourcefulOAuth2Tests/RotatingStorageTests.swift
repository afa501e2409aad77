import Foundation
import HTTPTypes
import Resourceful
import ResourcefulOAuth2
import ResourcefulTesting
import Testing

/// A refresh-token store a fleet shares (an app's own): its names, its claims, its errors.
@Suite struct RotatingStorageTests {
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

    /// Holds one refresh token, grants every claim and notes the releases.
    final class NotingClaims: RotatingSecretStorage {
        let released = Locked(0)
        let names = Locked<Set<String>>([])
        func secret(named name: String) async throws -> String? {
            names.withLock { _ = $0.insert(name) }
            return "rt-noted"
        }
        func storeSecret(_ secret: String, named name: String) async throws {}
        func deleteSecret(named name: String) async throws -> Bool { false }
        func replaceSecret(named name: String, spent: String, with new: String) async throws -> Bool { true }
        func claimSecret(named name: String, spending secret: String, until deadline: ContinuousClock.Instant) async throws -> SecretClaim {
            .claimed
        }
        func releaseClaim(named name: String, spending secret: String) async { released.withLock { $0 += 1 } }
    }

    @Test(arguments: [
        (#"{"error": "invalid_client"}"#, 401, true),
        (#"{"error": "server_error"}"#, 500, false),
        ("bad gateway", 502, false),
        // A coded body on a server error says nothing of what was spent.
        (#"{"error": "invalid_request"}"#, 503, false),
    ])
    func aClaimIsReleasedOnlyWhenTheServerSpentNothing(body: String, status: Int, released: Bool) async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/token", MockResponse(status: .init(code: status), headerFields: [.contentType: "application/json"], body: Data(body.utf8)))
            let settings = OAuth2Settings(clientID: "c", tokenEndpoint: server.baseURL.appendingPathComponent("token"), grant: .refreshToken)
            let claims = NotingClaims()
            let storage = try await OAuth2AuthenticationStorage(
                settings: settings, transport: transport, clientSecret: InMemorySecrets(["c-client-secret": "s"]), refreshTokens: claims)
            await #expect(throws: OAuth2Error.self) { _ = try await storage.refreshCredential(for: "svc") }
            #expect(server.requests.count == 1)
            // A 5xx may come after the token was spent: the claim runs out rather than let
            // another instance spend it again at once.
            #expect(claims.released.withLock { $0 } == (released ? 1 : 0))
            // The shared store's names are the server's and client's.
            #expect(claims.names.withLock { $0 } == [OAuth2AuthenticationStorage.sharedRefreshTokenName(service: "svc", settings: settings)])
        }
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
