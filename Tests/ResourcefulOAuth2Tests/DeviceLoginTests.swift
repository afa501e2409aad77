import Foundation
import Resourceful
import ResourcefulKeyring
import ResourcefulOAuth2
import ResourcefulTesting
import Testing

/// A person logging in at a terminal with the device flow, against django-oauth-toolkit: the
/// refresh token kept in the keyring, rotated on refresh, revoked and deleted on logout.
@Suite(.oauthServer, .serialized) struct DeviceLoginTests {
    static let service = "django-api"

    /// A storage for the public `device-client`, its refresh tokens in a fresh keyring account.
    func storage(_ server: OAuthServer, transport: any HTTPTransport) async throws -> (OAuth2AuthenticationStorage, KeyringSecretStorage) {
        let settings = OAuth2Settings(
            clientID: OAuthServer.deviceClient, issuer: URL(string: server.issuer), clientAuthentication: .none, grant: .refreshToken,
            scopes: ["read"]
        )
        let keyring = KeyringSecretStorage(account: "oauth-\(UUID().uuidString)")
        let storage = try await OAuth2AuthenticationStorage(settings: settings, transport: transport, refreshTokens: keyring)
        return (storage, keyring)
    }

    /// Logs in, approving the code as the user would; the approval's failure, if any, is thrown.
    func logIn(_ storage: OAuth2AuthenticationStorage, server: OAuthServer, accept: Bool = true) async throws {
        let approval = Locked<(any Error)?>(nil)
        do {
            try await storage.logIn(service: Self.service) { authorization in
                #expect(authorization.verificationURI.absoluteString == "\(server.issuer)/o/device/")
                do {
                    try await server.approveDevice(userCode: authorization.userCode, accept: accept)
                } catch {
                    approval.withLock { $0 = error }
                }
            }
        } catch {
            if let failed = approval.withLock({ $0 }) { throw failed }
            throw error
        }
    }

    @Test func aDeviceLoginKeepsARefreshTokenThatRotatesAndIsRevokedOnLogout() async throws {
        let server = try #require(OAuthServer.current)
        try await AsyncHTTPClientTransport.withTransport { transport in
            let (storage, keyring) = try await storage(server, transport: transport)
            let name = OAuth2AuthenticationStorage.refreshTokenName(service: Self.service)
            try await logIn(storage, server: server)
            let first = try #require(try await keyring.secret(named: name))

            var config = APIConfig(baseURL: URL(string: "\(server.issuer)/api")!, service: Self.service)
            config.timeout = .seconds(30)
            let api = API(dependencies: APIDependencies(apiConfig: config, authenticationStorage: storage, transport: transport))
            let me: Me = try await api.call(AdHocRequest<Me, Empty>(.show, "me"))
            #expect(me.user == OAuthServer.user.name)
            #expect(me.client_id == OAuthServer.deviceClient)

            // A refresh rotates the refresh token: the new one is in the keyring, the old one refused.
            _ = try await storage.refreshCredential(for: Self.service)
            let second = try #require(try await keyring.secret(named: name))
            let rotated = second != first
            #expect(rotated, "the refresh token was not rotated")
            let oldRefused = try await server.refreshError(first, clientID: OAuthServer.deviceClient)
            #expect(oldRefused == "invalid_grant")
            let again: Me = try await api.call(AdHocRequest<Me, Empty>(.show, "me"))
            #expect(again.user == OAuthServer.user.name)

            // Logout revokes the refresh token and deletes it.
            let outcome = try await storage.logOut(service: Self.service)
            #expect(outcome.revoked && outcome.deleted)
            #expect(try await keyring.secret(named: name) == nil)
            let revokedRefused = try await server.refreshError(second, clientID: OAuthServer.deviceClient)
            #expect(revokedRefused == "invalid_grant")
            let error = await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<Me, Empty>(.show, "me")) }
            #expect(error?.kind == .authentication)
            #expect(error?.description.contains("resourceful login --service \(Self.service)") == true)
        }
    }

    @Test func aRefusedRefreshTokenSaysToLogInAgain() async throws {
        let server = try #require(OAuthServer.current)
        try await AsyncHTTPClientTransport.withTransport { transport in
            let (storage, keyring) = try await storage(server, transport: transport)
            try await keyring.storeSecret("revoked-refresh-0c9", named: OAuth2AuthenticationStorage.refreshTokenName(service: Self.service))
            var config = APIConfig(baseURL: URL(string: "\(server.issuer)/api")!, service: Self.service)
            config.timeout = .seconds(30)
            let api = API(dependencies: APIDependencies(apiConfig: config, authenticationStorage: storage, transport: transport))
            let error = await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<Me, Empty>(.show, "me")) }
            #expect(error?.kind == .authentication)
            let text = error?.description ?? ""
            #expect(text.contains("log in again") && text.contains("invalid_grant"))
            #expect(!text.contains("revoked-refresh-0c9"))
            _ = try await keyring.deleteSecret(named: OAuth2AuthenticationStorage.refreshTokenName(service: Self.service))
        }
    }

    @Test func aDeniedDeviceLoginIsATypedError() async throws {
        let server = try #require(OAuthServer.current)
        try await AsyncHTTPClientTransport.withTransport { transport in
            let (storage, keyring) = try await storage(server, transport: transport)
            let error = await #expect(throws: OAuth2Error.self) { try await logIn(storage, server: server, accept: false) }
            #expect(error?.kind == .loginRequired)
            #expect(error?.serverError == "access_denied")
            #expect(try await keyring.secret(named: OAuth2AuthenticationStorage.refreshTokenName(service: Self.service)) == nil)
        }
    }
}
