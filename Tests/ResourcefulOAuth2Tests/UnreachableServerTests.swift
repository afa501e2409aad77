import Foundation
import Resourceful
import ResourcefulOAuth2
import ResourcefulTesting
import Testing

/// An authorization server nobody answers on, as a person reads what went wrong.
@Suite struct UnreachableServerTests {
    @Test func aRefusedConnectionIsSaidInWords() async throws {
        // A port that was listening, then closed: refused.
        let closed = try await MockServer.withRunning { server in server.baseURL }
        try await AsyncHTTPClientTransport.withTransport { transport in
            var settings = OAuth2Settings(clientID: "c", tokenEndpoint: closed.appendingPathComponent("token"), clientAuthentication: .none, grant: .refreshToken)
            settings.deviceAuthorizationEndpoint = closed.appendingPathComponent("device")
            let storage = try await OAuth2AuthenticationStorage(settings: settings, transport: transport, refreshTokens: InMemoryWritableSecrets())
            do {
                _ = try await storage.logIn(service: "s") { _ in }
                Issue.record("a login went through a closed port")
            } catch let error as OAuth2Error {
                #expect(error.kind == .unreachable)
                #expect(error.description.contains("could not be reached: the connection failed"), "\(error.description)")
                #expect(!error.description.contains("connectionFailed"), "\(error.description)")
            }
        }
    }
}
