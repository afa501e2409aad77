import Foundation
import Resourceful
import ResourcefulKeyring
import ResourcefulOAuth2
import ProcessTestSupport
import ResourcefulTesting
import Testing

/// A person logging in through a browser: authorization code with PKCE and a loopback redirect,
/// against django-oauth-toolkit (which requires PKCE and allows any loopback port).
@Suite(.oauthServer, .serialized) struct BrowserLoginTests {
    static let service = "django-api"

    func storage(_ server: OAuthServer, transport: any HTTPTransport) async throws -> (OAuth2AuthenticationStorage, KeyringSecretStorage) {
        let settings = OAuth2Settings(
            clientID: "native-client", issuer: URL(string: server.issuer), clientAuthentication: .none, grant: .refreshToken, scopes: ["read"]
        )
        let keyring = KeyringSecretStorage(account: "browser-\(UUID().uuidString)")
        return (try await OAuth2AuthenticationStorage(settings: settings, transport: transport, refreshTokens: keyring), keyring)
    }

    @Test func anApprovedBrowserLoginKeepsARefreshToken() async throws {
        let server = try #require(OAuthServer.current)
        try await AsyncHTTPClientTransport.withTransport { transport in
            let (storage, keyring) = try await storage(server, transport: transport)
            let seen = Locked<URL?>(nil)
            try await storage.logInWithBrowser(service: Self.service) { url in
                seen.withLock { $0 = url }
                try await server.approveAuthorization(url)
            }
            let url = try #require(seen.withLock { $0 })
            let query = Dictionary(uniqueKeysWithValues: (URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []).map { ($0.name, $0.value ?? "") })
            #expect(query["code_challenge_method"] == "S256")
            #expect(query["code_challenge"]?.count == 43)
            #expect(query["redirect_uri"]?.hasPrefix("http://127.0.0.1:") == true)
            #expect(try await keyring.secret(named: OAuth2AuthenticationStorage.refreshTokenName(service: Self.service)) != nil)
            var config = APIConfig(baseURL: URL(string: "\(server.issuer)/api")!, service: Self.service)
            config.timeout = .seconds(30)
            let api = API(dependencies: APIDependencies(apiConfig: config, authenticationStorage: storage, transport: transport))
            let me: Me = try await api.call(AdHocRequest<Me, Empty>(.show, "me"))
            #expect(me.user == OAuthServer.user.name && me.client_id == "native-client")
            try await storage.logOut(service: Self.service)
        }
    }

    @Test func aDeniedBrowserLoginIsATypedError() async throws {
        let server = try #require(OAuthServer.current)
        try await AsyncHTTPClientTransport.withTransport { transport in
            let (storage, keyring) = try await storage(server, transport: transport)
            let error = await #expect(throws: OAuth2Error.self) {
                try await storage.logInWithBrowser(service: Self.service) { url in try await server.approveAuthorization(url, accept: false) }
            }
            #expect(error?.kind == .loginRequired && error?.serverError == "access_denied")
            #expect(try await keyring.secret(named: OAuth2AuthenticationStorage.refreshTokenName(service: Self.service)) == nil)
        }
    }

    @Test func aForgedRedirectIsRefusedAndAnUnansweredLoginEndsInTime() async throws {
        let server = try #require(OAuthServer.current)
        try await AsyncHTTPClientTransport.withTransport { transport in
            let (storage, _) = try await storage(server, transport: transport)
            // Another page sends the browser to the loopback address with a code of its own.
            let forged = await #expect(throws: OAuth2Error.self) {
                try await storage.logInWithBrowser(service: Self.service) { url in
                    let redirect = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "redirect_uri" }?.value)
                    let result = try await Command.run("/usr/bin/curl", ["-sS", "\(redirect)?code=stolen&state=guessed"])
                    #expect(result.status == 0)
                }
            }
            #expect(forged?.kind == .invalidResponse)
            let start = ContinuousClock.now
            let late = await #expect(throws: OAuth2Error.self) {
                try await storage.logInWithBrowser(service: Self.service, timeout: .seconds(1)) { _ in }
            }
            #expect(late?.kind == .loginRequired)
            #expect(ContinuousClock.now - start < .seconds(30))
        }
    }
}
