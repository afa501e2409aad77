import Foundation
import HTTPTypes
import Resourceful
import ResourcefulOAuth2
import ResourcefulTesting
import Testing

/// The device flow's waits: `slow_down` lengthens the interval, codes that expire end the login.
@Suite struct DeviceFlowEdgeTests {
    @Test func slowDownAddsFiveSecondsToTheInterval() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/device", .json(raw: #"{"device_code": "dc-1", "user_code": "ABCD", "verification_uri": "https://auth.example/device", "expires_in": 120, "interval": 0}"#))
            server.stub(
                .post, "/token",
                .json(raw: #"{"error": "slow_down"}"#, status: .badRequest),
                .json(raw: #"{"error": "authorization_pending"}"#, status: .badRequest),
                .json(raw: #"{"access_token": "device-token", "token_type": "Bearer", "expires_in": 60}"#)
            )
            var settings = OAuth2Settings(clientID: "c", tokenEndpoint: server.baseURL.appendingPathComponent("token"), clientAuthentication: .none, grant: .refreshToken)
            settings.deviceAuthorizationEndpoint = server.baseURL.appendingPathComponent("device")
            let storage = try await OAuth2AuthenticationStorage(settings: settings, transport: transport, refreshTokens: InMemoryWritableSecrets())
            let start = ContinuousClock.now
            let credential = try await storage.logIn(service: "s") { authorization in
                #expect(authorization.userCode == "ABCD")
            }
            #expect(credential.header == "Bearer device-token")
            // Three polls: after a second (an interval of 0 is taken as 1), then twice 5 seconds
            // apart after the slow_down.
            #expect(ContinuousClock.now - start >= .seconds(10))
            #expect(server.requests.filter { $0.path == "/token" }.count == 3)
        }
    }

    @Test func codesThatExpireEndTheLogin() async throws {
        let server = try await OAuthServer.start(["--device-code-expires", "2"])
        do {
            try await AsyncHTTPClientTransport.withTransport { transport in
                let settings = OAuth2Settings(
                    clientID: OAuthServer.deviceClient, issuer: URL(string: server.issuer), clientAuthentication: .none, grant: .refreshToken
                )
                let storage = try await OAuth2AuthenticationStorage(settings: settings, transport: transport, refreshTokens: InMemoryWritableSecrets())
                let error = await #expect(throws: OAuth2Error.self) { try await storage.logIn(service: "s") { _ in } }
                #expect(error?.kind == .loginRequired)
                #expect(error?.serverError == "expired_token")
            }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}
