import Foundation
import ProcessTestSupport
import Resourceful
import ResourcefulKeyring
import ResourcefulOAuth2
import Testing

/// Several `resourceful` processes sharing one login, against django-oauth-toolkit (which rotates
/// the refresh token on every refresh, and refuses a rotated-out one with `invalid_grant`) behind
/// a relay that answers each refresh 3 s after the server made it: two calls at once spend the
/// refresh token once between them, and a logout while a refresh is out stays a logout.
@Suite(.oauthServer, .serialized) struct CrossProcessRefreshTests {
    /// A login made with the CLI: its options, keyring account and service name.
    struct Login {
        var common: [String]
        var account: String
        var service: String
        var config: TestConfig
        var output: String

        var refreshTokenName: String { OAuth2AuthenticationStorage.refreshTokenName(service: service) }

        func storedRefreshToken() async throws -> String? {
            try await KeyringSecretStorage(account: account).secret(named: refreshTokenName)
        }
    }

    /// Logs in to `service` with `resourceful login` (device flow, approved as the user would),
    /// its token endpoint behind `relay`, its refresh token kept under a new keyring account. Each
    /// test names a service of its own, so that no other test shares its lock.
    func logIn(_ server: OAuthServer, relay: PythonServer, service: String) async throws -> Login {
        let account = "xproc-\(UUID().uuidString)"
        let config = try TestConfig { _ in
            """
            {"baseURL": "https://api.example", "service": "top-api",
             "services": {"crm": {"baseURL": "\(server.issuer)/api", "service": "\(service)",
               "authentication": {"storages": ["oauth2"], "keyring": {"account": "\(account)"},
                 "oauth2": {"tokenEndpoint": "\(relay.baseURL.absoluteString)/o/token/",
                   "deviceAuthorizationEndpoint": "\(server.issuer)/o/device-authorization/",
                   "revocationEndpoint": "\(server.issuer)/o/revoke_token/",
                   "clientId": "\(OAuthServer.deviceClient)", "scopes": ["read"]}}}}}
            """
        }
        let common = ["--service", "crm", "--env", "x", "--config-directory", config.directory.path]
        let login = try RunningCommand(resourcefulTool, ["login"] + common)
        let prompt = try #require(try await login.line { $0.contains("enter the code") })
        try await server.approveDevice(userCode: try #require(OAuthServer.userCode(in: prompt)))
        let result = try await login.finish()
        #expect(result.status == 0)
        return Login(common: common, account: account, service: service, config: config, output: result.output)
    }

    /// The refresh requests the server has answered so far.
    func refreshes(_ server: OAuthServer) -> [OAuthServer.LogLine] {
        server.tokenRequests().filter { $0.grant_type == "refresh_token" }
    }

    @Test func twoCallsAtOnceSpendTheRefreshTokenOnce() async throws {
        let server = try #require(OAuthServer.current)
        let relay = try await PythonServer("slow_refresh_relay.py", ["--upstream-port", "\(server.server.port)", "--delay", "3"])
        let login = try await logIn(server, relay: relay, service: "xproc-two-calls")
        defer { login.config.remove() }
        // Only what the login says about its refresh token: one was received and stored.
        #expect(login.output.contains("the refresh token is in the keyring"))
        let before = refreshes(server).count

        let first = try RunningCommand(resourcefulTool, ["show", "me"] + login.common)
        let second = try RunningCommand(resourcefulTool, ["show", "me"] + login.common)
        let one = try await first.finish()
        let other = try await second.finish()
        await relay.stop()

        #expect(one.status == 0, "\(one.output)")
        #expect(other.status == 0, "\(other.output)")
        #expect(one.output.contains(OAuthServer.user.name) && other.output.contains(OAuthServer.user.name))
        // Each process spent the refresh token it found, one after the other: the server refused none.
        let spent = refreshes(server).dropFirst(before)
        let refused = spent.filter { $0.status != 200 || $0.error != nil }.map { $0.error ?? "status \($0.status ?? 0)" }
        #expect(refused == [])
        #expect(spent.count == 2)
        #expect(try await login.storedRefreshToken() != nil)
    }

    @Test func aLogoutWhileAnotherProcessRefreshesStaysALogout() async throws {
        let server = try #require(OAuthServer.current)
        let relay = try await PythonServer("slow_refresh_relay.py", ["--upstream-port", "\(server.server.port)", "--delay", "3"])
        let login = try await logIn(server, relay: relay, service: "xproc-logout")
        defer { login.config.remove() }
        let before = refreshes(server).count

        let call = try RunningCommand(resourcefulTool, ["show", "me"] + login.common)
        // The server has rotated the refresh token; the relay holds its answer back for 3 s.
        let rotatedBy = ContinuousClock.now + .seconds(30)
        while refreshes(server).count == before, ContinuousClock.now < rotatedBy {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(refreshes(server).count == before + 1, "the call did not refresh")
        let logout = try await Command.run(resourcefulTool, ["logout"] + login.common, keepSessionBus: true)
        let called = try await call.finish()
        await relay.stop()

        #expect(logout.status == 0, "\(logout.output)")
        #expect(logout.output.contains("Revoked and removed the refresh token"))
        // The call either finished before the logout (it held the lock) or was told it was logged out.
        #expect(called.status == 0 || called.output.contains("was logged out while its token was renewed"), "\(called.output)")
        let stored = try await login.storedRefreshToken()
        #expect(stored == nil, "the refresh token came back after the logout")
        let status = try await Command.run(resourcefulTool, ["status"] + login.common, keepSessionBus: true)
        #expect(status.status == 1, "\(status.output)")
        #expect(status.output.contains("resourceful login --service \(login.service)"))
    }
}
