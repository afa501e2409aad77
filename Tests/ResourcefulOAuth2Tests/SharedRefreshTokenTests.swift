import Foundation
import HTTPTypes
import Resourceful
import ResourcefulOAuth2
import ResourcefulTesting
import Testing

/// A refresh token another process changes while this one spends it (a process that shares no
/// lock with this one: an older version, another machine), seen from one storage against a
/// scripted server; and what a login reports of the refresh token it kept.
@Suite struct SharedRefreshTokenTests {
    /// A storage of the `refresh_token` grant on `server`, its refresh tokens in `refreshTokens`.
    func storage(_ server: MockServer, _ transport: any HTTPTransport, _ refreshTokens: InMemoryWritableSecrets) async throws
        -> OAuth2AuthenticationStorage
    {
        var settings = OAuth2Settings(
            clientID: "cli", tokenEndpoint: server.baseURL.appendingPathComponent("token"), clientAuthentication: .none,
            grant: .refreshToken
        )
        settings.revocationEndpoint = server.baseURL.appendingPathComponent("revoke")
        settings.deviceAuthorizationEndpoint = server.baseURL.appendingPathComponent("device")
        return try await OAuth2AuthenticationStorage(settings: settings, transport: transport, refreshTokens: refreshTokens)
    }

    /// The form field `name` of a recorded request's body.
    static func field(_ name: String, of request: RecordedRequest) -> String? {
        URLComponents(string: "?" + request.bodyText)?.queryItems?.first { $0.name == name }?.value
    }

    @Test func aRefreshTokenDeletedWhileItWasSpentIsNotStoredAgain() async throws {
        try await MockServer.withTransport { server, transport in
            let refreshTokens = InMemoryWritableSecrets()
            let service = "shared-deleted-while-spent"
            let name = OAuth2AuthenticationStorage.refreshTokenName(service: service)
            try await refreshTokens.storeSecret("rt-1", named: name)
            // Another process logs out while the refresh is out (the server has rotated rt-1).
            server.route(.post, "/token") { _ in
                _ = try await refreshTokens.deleteSecret(named: name)
                return .json(raw: #"{"access_token": "at-2", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "rt-2"}"#)
            }
            server.stub(.post, "/revoke", .json(raw: "{}"))
            let storage = try await storage(server, transport, refreshTokens)
            let error = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: service) }
            #expect(error?.kind == .loginRequired)
            #expect(error?.description.contains("was logged out while its token was renewed") == true)
            let stored = try await refreshTokens.secret(named: name) != nil
            #expect(!stored, "the rotated refresh token was stored after a logout")
            // The discarded token is revoked, not left valid at the server.
            let revoked = server.requests.filter { $0.path == "/revoke" }.map { Self.field("token", of: $0) == "rt-2" }
            #expect(revoked == [true])
        }
    }

    @Test func aRefusedRefreshTokenThatAnotherProcessRotatedIsRetriedWithTheNewOne() async throws {
        try await MockServer.withTransport { server, transport in
            let refreshTokens = InMemoryWritableSecrets()
            let service = "shared-rotated-elsewhere"
            let name = OAuth2AuthenticationStorage.refreshTokenName(service: service)
            try await refreshTokens.storeSecret("rt-1", named: name)
            // Another process spent rt-1 first and stored rt-2: rt-1 is refused, rt-2 is good.
            server.route(.post, "/token") { request in
                switch Self.field("refresh_token", of: request) {
                case "rt-1":
                    try await refreshTokens.storeSecret("rt-2", named: name)
                    return .json(raw: #"{"error": "invalid_grant"}"#, status: .badRequest)
                case "rt-2":
                    return .json(raw: #"{"access_token": "at-3", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "rt-3"}"#)
                default:
                    return .json(raw: #"{"error": "invalid_grant"}"#, status: .badRequest)
                }
            }
            let storage = try await storage(server, transport, refreshTokens)
            let header = try await storage.authenticationHeader(for: service)
            #expect(header == "Bearer at-3")
            #expect(try await refreshTokens.secret(named: name) == "rt-3")
            let spent = server.requests.filter { $0.path == "/token" }.map { Self.field("refresh_token", of: $0) ?? "none" }
            #expect(spent == ["rt-1", "rt-2"])
        }
    }

    @Test func aRefusedRefreshTokenNobodyChangedStillSaysToLogInAgain() async throws {
        try await MockServer.withTransport { server, transport in
            let refreshTokens = InMemoryWritableSecrets()
            let service = "shared-refused"
            try await refreshTokens.storeSecret("rt-1", named: OAuth2AuthenticationStorage.refreshTokenName(service: service))
            server.stub(.post, "/token", .json(raw: #"{"error": "invalid_grant"}"#, status: .badRequest))
            let storage = try await storage(server, transport, refreshTokens)
            let error = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: service) }
            #expect(error?.serverError == "invalid_grant")
            #expect(error?.description.contains("log in again") == true)
            #expect(server.requests.filter { $0.path == "/token" }.count == 1)
        }
    }

    /// Secrets whose reads fail after the first: a keyring that stops answering mid-renewal.
    final class FailingAfterOneRead: WritableSecretStorage {
        let secrets = InMemoryWritableSecrets()
        private let reads = Locked(0)
        struct Unreachable: Error {}
        func secret(named name: String) async throws -> String? {
            let count = reads.withLock { count in
                count += 1
                return count
            }
            if count > 1 { throw Unreachable() }
            return try await secrets.secret(named: name)
        }
        func storeSecret(_ secret: String, named name: String) async throws { try await secrets.storeSecret(secret, named: name) }
        func deleteSecret(named name: String) async throws -> Bool { try await secrets.deleteSecret(named: name) }
    }

    @Test func aRotatedRefreshTokenIsKeptWhenTheStorageCannotBeReadAgainUnderTheLock() async throws {
        try await MockServer.withTransport { server, transport in
            let refreshTokens = FailingAfterOneRead()
            let service = "shared-read-fails"
            let name = OAuth2AuthenticationStorage.refreshTokenName(service: service)
            try await refreshTokens.storeSecret("rt-1", named: name)
            server.stub(
                .post, "/token",
                .json(raw: #"{"access_token": "at-2", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "rt-2"}"#))
            let settings = OAuth2Settings(
                clientID: "cli", tokenEndpoint: server.baseURL.appendingPathComponent("token"), clientAuthentication: .none,
                grant: .refreshToken
            )
            let storage = try await OAuth2AuthenticationStorage(settings: settings, transport: transport, refreshTokens: refreshTokens)
            // rt-1 is spent: losing rt-2 too would log the person out for a failed read.
            #expect(try await storage.authenticationHeader(for: service) == "Bearer at-2")
            #expect(try await refreshTokens.secrets.secret(named: name) == "rt-2")
        }
    }

    /// A device login against `server`, whose token answer is `answer`.
    func deviceLogin(answer: String, service: String, refreshTokens: InMemoryWritableSecrets) async throws -> Bool {
        try await MockServer.withTransport { server, transport in
            server.stub(
                .post, "/device",
                .json(
                    raw:
                        #"{"device_code": "dc", "user_code": "WDJB-MJHT", "verification_uri": "\#(server.baseURL.absoluteString)/verify", "expires_in": 60, "interval": 1}"#
                )
            )
            server.stub(.post, "/token", .json(raw: answer))
            let storage = try await storage(server, transport, refreshTokens)
            try await storage.logIn(service: service) { _ in }
            return storage.keptRefreshToken(for: service)
        }
    }

    @Test func aLoginTellsWhetherItKeptARefreshToken() async throws {
        let refreshTokens = InMemoryWritableSecrets()
        let service = "shared-login-message"
        let name = OAuth2AuthenticationStorage.refreshTokenName(service: service)
        let kept = try await deviceLogin(
            answer: #"{"access_token": "at-1", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "rt-1"}"#, service: service,
            refreshTokens: refreshTokens
        )
        #expect(kept)
        #expect(try await refreshTokens.secret(named: name) == "rt-1")
        // A later login whose answer has no refresh token: it says so, and the earlier login's is gone.
        let keptAgain = try await deviceLogin(
            answer: #"{"access_token": "at-2", "token_type": "Bearer", "expires_in": 3600}"#, service: service, refreshTokens: refreshTokens
        )
        #expect(!keptAgain)
        let stale = try await refreshTokens.secret(named: name) != nil
        #expect(!stale, "an earlier login's refresh token stayed beside a login that has none")
    }
}
