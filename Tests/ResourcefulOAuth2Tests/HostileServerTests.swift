import Foundation
import HTTPTypes
import Resourceful
@testable import ResourcefulOAuth2
import ResourcefulTesting
import Testing

/// Authorization servers that answer oddly on purpose: the device login, the token's scope and
/// lifetime stay within bounds.
@Suite struct HostileServerTests {
    static func deviceStorage(_ server: MockServer, transport: any HTTPTransport) async throws -> OAuth2AuthenticationStorage {
        var settings = OAuth2Settings(
            clientID: "cli", tokenEndpoint: server.baseURL.appendingPathComponent("token"), clientAuthentication: .none, grant: .refreshToken
        )
        settings.deviceAuthorizationEndpoint = server.baseURL.appendingPathComponent("device")
        return try await OAuth2AuthenticationStorage(settings: settings, transport: transport, refreshTokens: InMemoryWritableSecrets())
    }

    static func device(interval: Int, expiresIn: Int) -> MockResponse {
        .json(raw: #"{"device_code": "dc-1", "user_code": "WDJB-MJHT", "verification_uri": "https://auth.example/device", "expires_in": \#(expiresIn), "interval": \#(interval)}"#)
    }

    @Test func anIntervalOfZeroDoesNotPollWithoutPause() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/device", Self.device(interval: 0, expiresIn: 3))
            server.stub(.post, "/token", .json(raw: #"{"error": "authorization_pending"}"#, status: .badRequest))
            let storage = try await Self.deviceStorage(server, transport: transport)
            let error = await #expect(throws: OAuth2Error.self) { try await storage.logIn(service: "s") { _ in } }
            #expect(error?.serverError == "expired_token")
            let polls = server.requests.filter { $0.path == "/token" }.count
            #expect(polls <= 5, "\(polls) polls in 3 seconds")
        }
    }

    @Test func aPollStillOutWhenTheCodesExpireEndsTheLoginAsExpired() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/device", Self.device(interval: 1, expiresIn: 2))
            server.stub(.post, "/token", MockResponse.json(raw: #"{"error": "authorization_pending"}"#, status: .badRequest).delayed(by: .seconds(600)))
            let storage = try await Self.deviceStorage(server, transport: transport)
            let start = ContinuousClock.now
            let error = await #expect(throws: OAuth2Error.self) { try await storage.logIn(service: "s") { _ in } }
            #expect(error?.kind == .loginRequired)
            #expect(error?.serverError == "expired_token")
            // The poll's own deadline is the codes' expiry, not the server's ten minutes.
            #expect(ContinuousClock.now - start < .seconds(300))
        }
    }

    @Test func aLongIntervalDoesNotOutlastTheCodes() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/device", Self.device(interval: 300, expiresIn: 2))
            server.stub(.post, "/token", .json(raw: #"{"error": "authorization_pending"}"#, status: .badRequest))
            let storage = try await Self.deviceStorage(server, transport: transport)
            let start = ContinuousClock.now
            let error = await #expect(throws: OAuth2Error.self) { try await storage.logIn(service: "s") { _ in } }
            #expect(error?.serverError == "expired_token")
            #expect(ContinuousClock.now - start < .seconds(30))
        }
    }

    static func tokenStorage(_ server: MockServer, transport: any HTTPTransport, skew: Duration = .seconds(60)) async throws -> OAuth2AuthenticationStorage {
        var settings = OAuth2Settings(clientID: "c", tokenEndpoint: server.baseURL.appendingPathComponent("token"), clientAuthentication: .none)
        settings.skew = skew
        return try await OAuth2AuthenticationStorage(settings: settings, transport: transport)
    }

    @Test func aScopeWithControlCharactersIsNotKept() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(
                .post, "/token",
                .json(raw: #"{"access_token": "tok-1", "token_type": "Bearer", "expires_in": 3600, "scope": "read \u001b]0;owned\u0007\u001b[2J write"}"#)
            )
            let storage = try await Self.tokenStorage(server, transport: transport)
            _ = try await storage.credential(for: "s")
            let scope = storage.cachedStatus(for: "s")?.scope
            let escaped = scope?.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } ?? false
            #expect(!escaped, "a terminal escape sequence is kept as the scope")
        }
    }

    @Test func anOrdinaryScopeIsKept() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/token", .json(raw: #"{"access_token": "tok-1", "token_type": "Bearer", "expires_in": 3600, "scope": "read write:all"}"#))
            let storage = try await Self.tokenStorage(server, transport: transport)
            _ = try await storage.credential(for: "s")
            #expect(storage.cachedStatus(for: "s")?.scope == "read write:all")
        }
    }

    @Test(arguments: [Duration.seconds(1e20), .seconds(-3600)])
    func aSkewSetInCodeOutOfAllProportionNeitherTrapsNorMisleads(_ skew: Duration) async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(
                .post, "/token",
                .json(raw: #"{"access_token": "tok-1", "token_type": "Bearer", "expires_in": 2}"#),
                .json(raw: #"{"access_token": "tok-2", "token_type": "Bearer", "expires_in": 2}"#)
            )
            let storage = try await Self.tokenStorage(server, transport: transport, skew: skew)
            let credential = try #require(try await storage.credential(for: "s"))
            #expect(credential.header == "Bearer tok-1")
            // Renewed halfway through its two seconds, never after it expired: wait until it has
            // expired (the condition, checked every 50 ms).
            while !credential.hasExpired() { try await Task.sleep(for: .milliseconds(50)) }
            let second = try await storage.authenticationHeader(for: "s")
            #expect(second == "Bearer tok-2")
        }
    }
}

/// A logout while a refresh is out.
@Suite struct LogoutDuringRefreshTests {
    @Test func aRefreshUnderWayDoesNotStoreItsRefreshTokenAfterTheLogout() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(
                .post, "/token",
                MockResponse.json(raw: #"{"access_token": "tok-2", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "rt-2"}"#)
                    .delayed(by: .seconds(1))
            )
            let refreshTokens = InMemoryWritableSecrets()
            let name = OAuth2AuthenticationStorage.refreshTokenName(service: "s")
            try await refreshTokens.storeSecret("rt-1", named: name)
            let storage = try await OAuth2AuthenticationStorage(
                settings: OAuth2Settings(
                    clientID: "cli", tokenEndpoint: server.baseURL.appendingPathComponent("token"), clientAuthentication: .none, grant: .refreshToken
                ),
                transport: transport, refreshTokens: refreshTokens
            )
            let call = Task { try await storage.authenticationHeader(for: "s") }
            // Until the refresh is out: the server records it before its one-second delay.
            let waitUntil = ContinuousClock.now + .seconds(30)
            while !server.requests.contains(where: { $0.path == "/token" }), ContinuousClock.now < waitUntil {
                try await Task.sleep(for: .milliseconds(10))
            }
            let outcome = try await storage.logOut(service: "s")
            #expect(outcome.deleted)
            _ = try? await call.value
            let storedAfterLogout = try await refreshTokens.secret(named: name) != nil
            #expect(!storedAfterLogout, "a refresh token is stored after the logout")
            #expect(storage.cachedStatus(for: "s") == nil, "an access token is kept after the logout")
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// The private key file is read as the configuration's other files are.
@Suite struct PrivateKeyFileTests {
    @Test func aFIFOIsRefusedWithoutWaitingForAWriter() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("key-\(UUID().uuidString).pem").path
        #expect(mkfifo(path, 0o600) == 0)
        defer { unlink(path) }
        // Should the read wait for a writer, one comes after 120 seconds and sends nothing; once
        // the test is done, it does not come at all.
        let writerWait = 120
        let done = DispatchSemaphore(value: 0)
        defer { done.signal() }
        let writer = Thread {
            guard done.wait(timeout: .now() + .seconds(writerWait)) == .timedOut else { return }
            let descriptor = open(path, O_WRONLY | O_NONBLOCK)
            if descriptor >= 0 { close(descriptor) }
        }
        writer.start()
        var settings = OAuth2Settings(clientID: "c", tokenEndpoint: URL(string: "https://auth.example/token"), clientAuthentication: .privateKeyJWT)
        settings.privateKeyFile = path
        let start = ContinuousClock.now
        let error = await #expect(throws: OAuth2Error.self) {
            _ = try await OAuth2AuthenticationStorage(settings: settings, transport: StubTransport { _ in throw CancellationError() })
        }
        #expect(error?.kind == .configuration)
        // Half the writer's wait leaves a loaded machine room and still tells the two apart.
        #expect(ContinuousClock.now - start < .seconds(writerWait) / 2, "the read waited for a writer")
    }
}

/// A token endpoint that redirects, and answers nested too deeply.
@Suite struct TokenEndpointOddAnswersTests {
    @Test func aRedirectFromTheTokenEndpointIsNotFollowed() async throws {
        try await MockServer.withTransport { server, transport in
            let elsewhere = server.baseURL.appendingPathComponent("collect").absoluteString
            server.stub(.post, "/token", MockResponse(status: .temporaryRedirect, headerFields: [.location: elsewhere]))
            server.stub(.post, "/collect", .json(raw: #"{"access_token": "tok-1", "token_type": "Bearer"}"#))
            let storage = try await OAuth2AuthenticationStorage(
                settings: OAuth2Settings(clientID: "c", tokenEndpoint: server.baseURL.appendingPathComponent("token")),
                transport: transport, clientSecret: InMemorySecrets(["c-client-secret": "mock-secret-2e7"])
            )
            let error = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: "s") }
            #expect(error?.kind == .refused)
            #expect(!server.requests.contains { $0.path == "/collect" })
        }
    }

    @Test func aDeeplyNestedAnswerIsATypedError() async throws {
        let nested = String(repeating: "[", count: 20_000) + String(repeating: "]", count: 20_000)
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/token", .json(raw: #"{"access_token": "a", "token_type": "Bearer", "x": \#(nested)}"#))
            server.stub(.post, "/refused", .json(raw: #"{"error": "invalid_client", "x": \#(nested)}"#, status: .unauthorized))
            for path in ["token", "refused"] {
                let storage = try await OAuth2AuthenticationStorage(
                    settings: OAuth2Settings(clientID: "c", tokenEndpoint: server.baseURL.appendingPathComponent(path), clientAuthentication: .none),
                    transport: transport
                )
                // Either way a value or an error, not a trap.
                _ = try? await storage.authenticationHeader(for: "s")
            }
        }
    }
}
