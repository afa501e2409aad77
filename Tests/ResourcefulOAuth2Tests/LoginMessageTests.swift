import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

/// What `resourceful login` says about the refresh token: that one is kept, and where, only when
/// the server sent one and it was stored.
@Suite struct LoginMessageTests {
    @Test func aLoginWhoseServerSendsNoRefreshTokenDoesNotSayOneIsKept() async throws {
        try await MockServer.withTransport { server, _ in
            let base = server.baseURL.absoluteString
            server.stub(
                .post, "/device",
                .json(
                    raw:
                        #"{"device_code": "dc", "user_code": "WDJB-MJHT", "verification_uri": "\#(base)/verify", "expires_in": 60, "interval": 1}"#
                )
            )
            server.stub(.post, "/token", .json(raw: #"{"access_token": "at-1", "token_type": "Bearer", "expires_in": 3600}"#))
            let service = "login-message-test"
            let config = try TestConfig { _ in
                """
                {"baseURL": "\(base)/api", "service": "\(service)",
                 "authentication": {"storages": ["oauth2"], "keyring": {"account": "message-\(UUID().uuidString)"},
                   "oauth2": {"tokenEndpoint": "\(base)/token", "deviceAuthorizationEndpoint": "\(base)/device", "clientId": "cli"}}}
                """
            }
            defer { config.remove() }
            let login = try await Command.run(
                resourcefulTool, ["login", "--service", service, "--env", "x", "--config-directory", config.directory.path],
                keepSessionBus: true
            )
            #expect(login.status == 0, "\(login.output)")
            #expect(login.output.contains("Logged in to \(service)"))
            #expect(!login.output.contains("the refresh token is in the keyring"))
            #expect(login.output.contains("the server sent no refresh token"))
        }
    }
}
