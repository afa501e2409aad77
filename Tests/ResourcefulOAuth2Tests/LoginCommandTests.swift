import Foundation
import ProcessTestSupport
import Resourceful
import ResourcefulKeyring
import ResourcefulOAuth2
import Testing

/// `resourceful login`, `status` and `logout` for a service configured for OAuth 2, run as a
/// person runs them against django-oauth-toolkit.
@Suite(.oauthServer, .serialized) struct LoginCommandTests {
    @Test func loginStatusAndLogoutThroughTheDeviceFlow() async throws {
        let server = try #require(OAuthServer.current)
        let account = "cli-\(UUID().uuidString)"
        let config = try TestConfig { _ in
            """
            {"baseURL": "https://api.example", "service": "top-api",
             "services": {"django": {"baseURL": "\(server.issuer)/api", "service": "django-api",
               "authentication": {"storages": ["oauth2"], "keyring": {"account": "\(account)"},
                 "oauth2": {"issuer": "\(server.issuer)", "clientId": "\(OAuthServer.deviceClient)", "scopes": ["read"]}}}}}
            """
        }
        defer { config.remove() }
        let common = ["--service", "django", "--env", "x", "--config-directory", config.directory.path]

        let login = try RunningCommand(resourcefulTool, ["login"] + common)
        let prompt = try #require(try await login.line { $0.contains("enter the code") })
        #expect(prompt.contains("\(server.issuer)/o/device/"))
        try await server.approveDevice(userCode: try #require(OAuthServer.userCode(in: prompt)))
        let loggedIn = try await login.finish()
        #expect(loggedIn.status == 0)
        #expect(loggedIn.output.contains("Logged in to django-api"))
        let stored = try await KeyringSecretStorage(account: account).secret(named: OAuth2AuthenticationStorage.refreshTokenName(service: "django-api"))
        let refreshToken = try #require(stored)

        let status = try await Command.run(resourcefulTool, ["status"] + common, keepSessionBus: true)
        #expect(status.status == 0)
        #expect(status.output.contains("access token valid until") && status.output.contains("scopes: read"))
        // Asking did not spend the refresh token: the server rotates it on every refresh.
        let afterStatus = try await KeyringSecretStorage(account: account).secret(named: OAuth2AuthenticationStorage.refreshTokenName(service: "django-api"))
        let kept = afterStatus == refreshToken
        #expect(kept, "status renewed the refresh token")

        let logout = try await Command.run(resourcefulTool, ["logout"] + common, keepSessionBus: true)
        #expect(logout.status == 0)
        #expect(logout.output.contains("Revoked and removed the refresh token for django-api"))
        #expect(try await KeyringSecretStorage(account: account).secret(named: OAuth2AuthenticationStorage.refreshTokenName(service: "django-api")) == nil)

        let after = try await Command.run(resourcefulTool, ["status"] + common, keepSessionBus: true)
        #expect(after.status == 1)
        #expect(after.output.contains("resourceful login --service django-api"))
        // Compared here, not in an expectation, so that a failure does not print the token.
        let leaks = [loggedIn.output, status.output, logout.output, after.output].filter { $0.contains(refreshToken) }.count
        #expect(leaks == 0, "a command printed the refresh token")
    }

    @Test func loginThroughABrowser() async throws {
        let server = try #require(OAuthServer.current)
        let account = "cli-browser-\(UUID().uuidString)"
        let config = try TestConfig { _ in
            """
            {"baseURL": "\(server.issuer)/api", "service": "django-api",
             "authentication": {"storages": ["oauth2"], "keyring": {"account": "\(account)"},
               "oauth2": {"issuer": "\(server.issuer)", "clientId": "native-client", "scopes": ["read"]}}}
            """
        }
        defer { config.remove() }
        let common = ["--service", "django-api", "--env", "x", "--config-directory", config.directory.path]
        let login = try RunningCommand(resourcefulTool, ["login", "--browser"] + common)
        let prompt = try #require(try await login.line { $0.contains("open this address in a browser") })
        let address = try #require(prompt.split(separator: " ").last.flatMap { URL(string: String($0)) })
        try await server.approveAuthorization(address)
        let result = try await login.finish()
        #expect(result.status == 0 && result.output.contains("Logged in to django-api"))
        let logout = try await Command.run(resourcefulTool, ["logout"] + common, keepSessionBus: true)
        #expect(logout.output.contains("Revoked and removed"))
    }
}
