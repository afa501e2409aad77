import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulOAuth2
import ResourcefulPostgres
import ResourcefulTesting
import Testing

/// A refused instance of a fleet backs off from the token server, not from the fleet: a token
/// another instance keeps in PostgreSQL meanwhile is read and used; without one, no lease is taken
/// and nothing is asked.
@Suite(.postgres)
struct FleetRefusalBackoffTests {
    /// The client's secret, whatever its name.
    struct ClientSecret: SecretStorage {
        func secret(named name: String) async throws -> String? { "fleet-secret-4e8" }
    }

    @Test func aRefusedInstanceUsesTheTokenAnotherKeptAndAsksNothingWithoutOne() async throws {
        let keys = try SharedStateKeys(current: "k1", keys: ["k1": Array(repeating: UInt8(0x5a), count: 32)])
        try await MockServer.withTransport { server, transport in
            server.stub(
                .post, "/token", .json(raw: #"{"error": "invalid_client"}"#, status: .unauthorized),
                .json(raw: #"{"access_token": "fleet-token-7c1", "token_type": "Bearer", "expires_in": 3600}"#))
            var settings = OAuth2Settings(clientID: "backoff-\(UUID())", tokenEndpoint: server.baseURL.appendingPathComponent("token"))
            settings.refusalBackoff = .seconds(3600)
            settings.clientSecretStorage = "memory"
            let secrets = ClientSecret()
            try await withInstances(2) { [settings] instances in
                let refused = try await OAuth2AuthenticationStorage(
                    settings: settings, transport: transport, clientSecret: secrets,
                    sharedTokens: PostgresTokenCache(sharedState: instances[0], keys: keys))
                let other = try await OAuth2AuthenticationStorage(
                    settings: settings, transport: transport, clientSecret: secrets,
                    sharedTokens: PostgresTokenCache(sharedState: instances[1], keys: keys))
                _ = await #expect(throws: OAuth2Error.self) { _ = try await refused.authenticationHeader(for: "fleet") }
                // Backing off with nothing kept: the back-off's error, no lease, no request.
                let held = await #expect(throws: OAuth2Error.self) { _ = try await refused.authenticationHeader(for: "fleet") }
                #expect(held?.serverError == "invalid_client")
                #expect(held?.description.contains("asked again in") == true)
                #expect(server.requests.count == 1)
                // Another instance gets a token and keeps it in PostgreSQL: the refused one reads it.
                #expect(try await other.authenticationHeader(for: "fleet") == "Bearer fleet-token-7c1")
                #expect(try await refused.authenticationHeader(for: "fleet") == "Bearer fleet-token-7c1")
                #expect(server.requests.count == 2)
            }
        }
    }
}
