import Foundation
import HTTPTypes
import Resourceful
import ResourcefulOAuth2
import ResourcefulTesting
import Testing

/// Secrets read from a storage are checked before they are sent: a client secret and a refresh
/// token are printable ASCII (RFC 6749 appendix A), so that nothing a storage holds by mistake
/// goes to the server or past the check that keeps secrets out of error descriptions.
@Suite struct StoredSecretTests {
    @Test(arguments: ["two-line-secret-8d3\nsecond", "tab\tsecret-8d3", "é-secret-8d3"])
    func aClientSecretThatIsNotPrintableASCIIIsNotSent(_ secret: String) async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/token", .json(raw: #"{"access_token": "tok-1", "token_type": "Bearer", "expires_in": 3600}"#))
            var settings = OAuth2Settings(clientID: "c", tokenEndpoint: server.baseURL.appendingPathComponent("token"))
            settings.clientSecretStorage = "memory"
            let storage = try await OAuth2AuthenticationStorage(
                settings: settings, transport: transport, clientSecret: InMemorySecrets(["c-client-secret": secret])
            )
            let error = await #expect(throws: OAuth2Error.self) { _ = try await storage.credential(for: "s") }
            #expect(error?.kind == .configuration)
            let shown = (error?.description ?? "").contains("secret-8d3")
            #expect(!shown, "the error shows the secret")
            #expect(server.requests.isEmpty)
        }
    }

    @Test func aStoredRefreshTokenThatIsNotATokenAsksForALogin() async throws {
        try await MockServer.withTransport { server, transport in
            let refreshTokens = InMemoryWritableSecrets()
            try await refreshTokens.storeSecret("refresh-6a2\nsecond", named: OAuth2AuthenticationStorage.refreshTokenName(service: "s"))
            let storage = try await OAuth2AuthenticationStorage(
                settings: OAuth2Settings(
                    clientID: "cli", tokenEndpoint: server.baseURL.appendingPathComponent("token"), clientAuthentication: .none, grant: .refreshToken
                ),
                transport: transport, refreshTokens: refreshTokens
            )
            let error = await #expect(throws: OAuth2Error.self) { _ = try await storage.credential(for: "s") }
            #expect(error?.kind == .loginRequired)
            let shown = (error?.description ?? "").contains("refresh-6a2")
            #expect(!shown, "the error shows the token")
            #expect(server.requests.isEmpty)
        }
    }

    @Test func statusReadsTheStoredLoginWithoutAskingTheServer() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/token", .json(raw: #"{"access_token": "tok-1", "token_type": "Bearer", "expires_in": 3600, "scope": "read", "refresh_token": "rt-2"}"#))
            let refreshTokens = InMemoryWritableSecrets()
            try await refreshTokens.storeSecret("rt-1", named: OAuth2AuthenticationStorage.refreshTokenName(service: "s"))
            let settings = OAuth2Settings(
                clientID: "cli", tokenEndpoint: server.baseURL.appendingPathComponent("token"), clientAuthentication: .none, grant: .refreshToken
            )
            let first = try await OAuth2AuthenticationStorage(settings: settings, transport: transport, refreshTokens: refreshTokens)
            _ = try await first.credential(for: "s")
            // Another process (a new storage) asks: it reads what the first one stored.
            let second = try await OAuth2AuthenticationStorage(settings: settings, transport: transport, refreshTokens: refreshTokens)
            let status = try await second.status(for: "s")
            #expect(status.scope == "read")
            #expect(status.expiresAt.map { $0 > Date() } == true)
            #expect(server.requests.count == 1)
            try await refreshTokens.storeSecret("{\"scope\": \"read \\u001b[2J\"}", named: "s.oauth2-status")
            #expect(try await second.status(for: "s").scope == nil)
            // After a logout there is nothing to show.
            _ = try await second.logOut(service: "s")
            let error = await #expect(throws: OAuth2Error.self) { _ = try await second.status(for: "s") }
            #expect(error?.kind == .loginRequired)
            #expect(try await refreshTokens.secret(named: "s.oauth2-status") == nil)
        }
    }
}
