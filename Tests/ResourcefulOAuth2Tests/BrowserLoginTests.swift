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

    @Test func aForgedRedirectIsIgnoredAndAnUnansweredLoginEndsInTime() async throws {
        let server = try #require(OAuthServer.current)
        try await AsyncHTTPClientTransport.withTransport { transport in
            let (storage, _) = try await storage(server, transport: transport)
            // Another page sends the browser to the loopback address with a code of its own: it
            // is answered 400 and the login goes on waiting for the real redirect, until its time.
            let answered = Locked<String?>(nil)
            let start = ContinuousClock.now
            let late = await #expect(throws: OAuth2Error.self) {
                try await storage.logInWithBrowser(service: Self.service, timeout: .seconds(3)) { url in
                    let redirect = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "redirect_uri" }?.value)
                    let result = try await Command.run("/usr/bin/curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "\(redirect)?code=stolen&state=guessed"])
                    answered.withLock { $0 = result.output }
                }
            }
            #expect(answered.withLock { $0 } == "400")
            #expect(late?.kind == .loginRequired)
            #expect(ContinuousClock.now - start < .seconds(30))
        }
    }

    @Test func anIdleConnectionAndAForgedRedirectDoNotStopTheRealLogin() async throws {
        let server = try #require(OAuthServer.current)
        try await AsyncHTTPClientTransport.withTransport { transport in
            let (storage, _) = try await storage(server, transport: transport)
            let answers = Locked<[String]>([])
            try await storage.logInWithBrowser(service: Self.service, timeout: .seconds(120)) { url in
                let redirect = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "redirect_uri" }?.value)
                let port = try #require(URLComponents(string: redirect)?.port)
                // A local user holds a connection open without a word for the whole login...
                let idle = try #require(LoopbackSocket.connectWithoutWaiting(to: port))
                defer { close(idle) }
                // ... and sends a redirect of their own, and asks another path.
                for target in ["\(redirect)?code=stolen&state=x", "http://127.0.0.1:\(port)/favicon.ico"] {
                    let result = try await Command.run("/usr/bin/curl", ["-sS", "--max-time", "20", "-o", "/dev/null", "-w", "%{http_code}", target])
                    answers.withLock { $0.append(result.output) }
                }
                try await server.approveAuthorization(url)
            }
            #expect(answers.withLock { $0 } == ["400", "404"])
            try await storage.logOut(service: Self.service)
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
