import Foundation
import HTTPTypes
import Resourceful
import ResourcefulOAuth2
import ResourcefulTesting
import Testing

/// A token request the server refused is not asked again for `refusalBackoff`: the calls in that
/// time fail at once with the same error, and the server sees one request, not one per call
/// (against Django: `ClientCredentialsTests`).
@Suite struct RefusalBackoffTests {
    /// A storage on `server`'s `/token` for client `c`, backing off refusals for `backoff`.
    static func storage(_ server: MockServer, transport: any HTTPTransport, backoff: Duration) async throws -> OAuth2AuthenticationStorage {
        var settings = OAuth2Settings(clientID: "c", tokenEndpoint: server.baseURL.appendingPathComponent("token"), refusalBackoff: backoff)
        settings.clientSecretStorage = "memory"
        return try await OAuth2AuthenticationStorage(
            settings: settings, transport: transport, clientSecret: InMemorySecrets(["c-client-secret": "backoff-secret-9d2"]))
    }

    static let refusal = MockResponse.json(raw: #"{"error": "invalid_client"}"#, status: .unauthorized)
    static let token = MockResponse.json(raw: #"{"access_token": "backoff-token", "token_type": "Bearer", "expires_in": 3600}"#)

    @Test func invalidatingEndsTheBackoffAtOnce() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/token", Self.refusal, Self.token)
            let storage = try await Self.storage(server, transport: transport, backoff: .seconds(3600))
            let refused = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: "s") }
            #expect(refused?.serverError == "invalid_client")
            let held = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: "s") }
            #expect(held?.kind == .refused)
            #expect(held?.serverError == "invalid_client")
            #expect(held?.description.contains("asked again in") == true)
            #expect(server.requests.count == 1)
            storage.invalidate()
            #expect(try await storage.authenticationHeader(for: "s") == "Bearer backoff-token")
            #expect(server.requests.count == 2)
        }
    }

    @Test func aZeroBackoffAsksAtEachCall() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/token", Self.refusal, Self.refusal, Self.token)
            let storage = try await Self.storage(server, transport: transport, backoff: .zero)
            for _ in 0..<2 {
                let refused = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: "s") }
                #expect(refused?.description.contains("asked again") == false)
            }
            #expect(try await storage.authenticationHeader(for: "s") == "Bearer backoff-token")
            #expect(server.requests.count == 3)
        }
    }

    @Test func aRefusedRefreshTokenIsNotBackedOffFromSoThatALoginElsewhereServesTheNextCall() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/token", .json(raw: #"{"error": "invalid_grant"}"#, status: .badRequest), Self.token)
            let settings = OAuth2Settings(
                clientID: "c", tokenEndpoint: server.baseURL.appendingPathComponent("token"), grant: .refreshToken, refusalBackoff: .seconds(3600))
            let stored = InMemoryWritableSecrets()
            let name = OAuth2AuthenticationStorage.refreshTokenName(service: "s")
            try await stored.storeSecret("refused-refresh-token-1", named: name)
            let storage = try await OAuth2AuthenticationStorage(
                settings: settings, transport: transport, clientSecret: InMemorySecrets(["c-client-secret": "backoff-secret-9d2"]), refreshTokens: stored)
            let refused = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: "s") }
            #expect(refused?.kind == .loginRequired)
            // Another process's login stores a new refresh token: the next call spends it at once.
            try await stored.storeSecret("new-login-refresh-token-2", named: name)
            #expect(try await storage.authenticationHeader(for: "s") == "Bearer backoff-token")
            #expect(server.requests.count == 2)
        }
    }

    @Test func aServerThatCannotBeReachedIsNotBackedOffFrom() async throws {
        // A port nothing listens on: asking again may go otherwise at once.
        let closed = try await MockServer.start()
        let url = closed.baseURL
        try await closed.shutdown()
        try await MockServer.withTransport { _, transport in
            var settings = OAuth2Settings(clientID: "c", tokenEndpoint: url.appendingPathComponent("token"), refusalBackoff: .seconds(3600))
            settings.clientSecretStorage = "memory"
            let storage = try await OAuth2AuthenticationStorage(
                settings: settings, transport: transport, clientSecret: InMemorySecrets(["c-client-secret": "backoff-secret-9d2"]))
            for _ in 0..<2 {
                let failed = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: "s") }
                #expect(failed?.kind == .unreachable)
                #expect(failed?.description.contains("asked again") == false)
            }
        }
    }
}
