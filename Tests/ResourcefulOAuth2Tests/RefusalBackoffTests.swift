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
    /// A storage on `server`'s `/token` for client `c`, backing off refusals for `backoff`, sharing
    /// its tokens through `sharedTokens` when given.
    static func storage(
        _ server: MockServer, transport: any HTTPTransport, backoff: Duration, sharedTokens: (any SharedTokenCache)? = nil
    ) async throws -> OAuth2AuthenticationStorage {
        var settings = OAuth2Settings(clientID: "c", tokenEndpoint: server.baseURL.appendingPathComponent("token"))
        settings.refusalBackoff = backoff
        settings.clientSecretStorage = "memory"
        return try await OAuth2AuthenticationStorage(
            settings: settings, transport: transport, clientSecret: InMemorySecrets(["c-client-secret": "backoff-secret-9d2"]),
            sharedTokens: sharedTokens)
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
            var settings = OAuth2Settings(clientID: "c", tokenEndpoint: server.baseURL.appendingPathComponent("token"), grant: .refreshToken)
            settings.refusalBackoff = .seconds(3600)
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
        try await MockServer.withTransport { _, transport in
            // A port nothing listens on any more: asking again may go otherwise at once.
            let closed = try await MockServer.start()
            let url = closed.baseURL
            try await closed.shutdown()
            var settings = OAuth2Settings(clientID: "c", tokenEndpoint: url.appendingPathComponent("token"))
            settings.refusalBackoff = .seconds(3600)
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

    @Test(arguments: [
        MockResponse.status(.badGateway),
        MockResponse.json(raw: #"{"error": "temporarily_unavailable"}"#, status: .serviceUnavailable),
        MockResponse.json(raw: #"{"error": "server_error"}"#, status: .badRequest),
    ])
    func aServerThatFailsIsNotBackedOffFrom(_ failure: MockResponse) async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/token", failure, Self.token)
            let storage = try await Self.storage(server, transport: transport, backoff: .seconds(3600))
            let failed = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: "s") }
            #expect(failed?.kind == .refused)
            #expect(try await storage.authenticationHeader(for: "s") == "Bearer backoff-token")
            #expect(server.requests.count == 2)
        }
    }

    @Test func aTooManyRequestsAnswerIsBackedOffFrom() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/token", .status(.tooManyRequests), Self.token)
            let storage = try await Self.storage(server, transport: transport, backoff: .seconds(3600))
            _ = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: "s") }
            let held = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: "s") }
            #expect(held?.description.contains("status 429") == true)
            #expect(held?.description.contains("asked again in") == true)
            #expect(server.requests.count == 1)
        }
    }

    @Test(arguments: [Duration.seconds(Int64.max), .seconds(1e20), .seconds(-3600)])
    func aBackoffSetInCodeOutOfAllProportionNeitherTrapsNorLastsPastADay(_ backoff: Duration) async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/token", Self.refusal, Self.token)
            let storage = try await Self.storage(server, transport: transport, backoff: backoff)
            _ = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: "s") }
            if backoff > .zero {
                let held = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: "s") }
                #expect(held?.description.contains("asked again in 86400 s") == true)
                #expect(server.requests.count == 1)
            } else {
                // Zero or less: off.
                #expect(try await storage.authenticationHeader(for: "s") == "Bearer backoff-token")
                #expect(server.requests.count == 2)
            }
        }
    }

    @Test func aLoginEndsTheBackoff() async throws {
        try await MockServer.withTransport { server, transport in
            let renewed = MockResponse.json(raw: #"{"access_token": "login-token", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "login-refresh"}"#)
            server.stub(.post, "/token", Self.refusal, renewed)
            server.stub(.post, "/device", .json(raw: #"{"device_code": "dc-1", "user_code": "ABCD", "verification_uri": "https://auth.example/device", "expires_in": 120, "interval": 0}"#))
            var settings = OAuth2Settings(clientID: "c", tokenEndpoint: server.baseURL.appendingPathComponent("token"), clientAuthentication: .none, grant: .refreshToken)
            settings.refusalBackoff = .seconds(3600)
            settings.deviceAuthorizationEndpoint = server.baseURL.appendingPathComponent("device")
            let stored = InMemoryWritableSecrets()
            try await stored.storeSecret("some-refresh-token", named: OAuth2AuthenticationStorage.refreshTokenName(service: "s"))
            let storage = try await OAuth2AuthenticationStorage(settings: settings, transport: transport, refreshTokens: stored)
            _ = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: "s") }
            let held = await #expect(throws: OAuth2Error.self) { _ = try await storage.refreshCredential(for: "s") }
            #expect(held?.description.contains("asked again in") == true)
            #expect(server.requests.filter { $0.path == "/token" }.count == 1)
            _ = try await storage.logIn(service: "s") { _ in }
            // A 401 now renews with the login's refresh token at once: the back-off ended.
            #expect(try await storage.refreshCredential(for: "s") == "Bearer login-token")
            #expect(server.requests.filter { $0.path == "/token" }.count == 3)
        }
    }

    @Test func aFleetsSharedTokenIsStillReadWhileBackingOff() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/token", Self.refusal, Self.token)
            let cache = SharedTokensInMemory()
            let refused = try await Self.storage(server, transport: transport, backoff: .seconds(3600), sharedTokens: cache)
            let other = try await Self.storage(server, transport: transport, backoff: .seconds(3600), sharedTokens: cache)
            _ = await #expect(throws: OAuth2Error.self) { _ = try await refused.authenticationHeader(for: "s") }
            // Nothing kept yet: the back-off's error, and no request.
            let held = await #expect(throws: OAuth2Error.self) { _ = try await refused.authenticationHeader(for: "s") }
            #expect(held?.description.contains("asked again in") == true)
            #expect(server.requests.count == 1)
            // Another instance gets a token and keeps it for the fleet: the refused one reads it.
            #expect(try await other.authenticationHeader(for: "s") == "Bearer backoff-token")
            #expect(try await refused.authenticationHeader(for: "s") == "Bearer backoff-token")
            #expect(server.requests.count == 2)
        }
    }

    @Test func afterARefused401RenewalAFleetsNewerTokenIsRead() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(
                .post, "/token", .json(raw: #"{"access_token": "first-token", "token_type": "Bearer", "expires_in": 3600}"#),
                .status(.tooManyRequests), .json(raw: #"{"access_token": "second-token", "token_type": "Bearer", "expires_in": 3600}"#))
            let cache = SharedTokensInMemory()
            let a = try await Self.storage(server, transport: transport, backoff: .seconds(3600), sharedTokens: cache)
            let b = try await Self.storage(server, transport: transport, backoff: .seconds(3600), sharedTokens: cache)
            #expect(try await a.authenticationHeader(for: "s") == "Bearer first-token")
            // A `401` makes A renew: refused (429), backed off.
            _ = await #expect(throws: OAuth2Error.self) { _ = try await a.refreshCredential(for: "s") }
            // B renews too and keeps a newer token for the fleet: A's next renewal reads it.
            #expect(try await b.authenticationHeader(for: "s") == "Bearer first-token")
            #expect(try await b.refreshCredential(for: "s") == "Bearer second-token")
            #expect(try await a.refreshCredential(for: "s") == "Bearer second-token")
            #expect(server.requests.count == 3)
        }
    }

    @Test func callsDuringTheBackoffDoNotLengthenIt() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/token", Self.refusal, Self.token)
            let storage = try await Self.storage(server, transport: transport, backoff: .seconds(1), sharedTokens: SharedTokensInMemory())
            let started = ContinuousClock.now
            _ = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: "s") }
            // Calls every 50 ms, each backed off: the server is asked again once the second is up,
            // not a second after the last of them.
            let deadline = ContinuousClock.now + .seconds(20)
            var header: String?
            while header == nil, ContinuousClock.now < deadline {
                header = try? await storage.authenticationHeader(for: "s")
                if header == nil { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(header == "Bearer backoff-token")
            #expect(server.requests.count == 2)
            #expect(ContinuousClock.now - started >= .seconds(1))
        }
    }

    @Test func aClientsOwnGrantRefusedIsBackedOffFrom() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/token", .json(raw: #"{"error": "access_denied"}"#, status: .forbidden), Self.token)
            let storage = try await Self.storage(server, transport: transport, backoff: .seconds(3600))
            let refused = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: "s") }
            #expect(refused?.serverError == "access_denied")
            let held = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: "s") }
            #expect(held?.serverError == "access_denied")
            #expect(held?.description.contains("asked again in") == true)
            #expect(server.requests.count == 1)
        }
    }
}

/// A fleet's shared tokens in memory: what one storage keeps, another reads.
final class SharedTokensInMemory: SharedTokenCache {
    private let tokens = Locked<[String: SharedToken]>([:])

    func token(named name: String, deadline: ContinuousClock.Instant) async -> SharedToken? {
        tokens.withLock { $0[name] }
    }

    func withLease(
        named name: String, refusing refused: String?, deadline: ContinuousClock.Instant,
        fetch: @escaping @Sendable () async throws -> SharedToken
    ) async throws -> SharedToken {
        let token = try await fetch()
        tokens.withLock { $0[name] = token }
        return token
    }
}
