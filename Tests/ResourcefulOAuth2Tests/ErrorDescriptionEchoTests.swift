import Foundation
import HTTPTypes
import Resourceful
@testable import ResourcefulOAuth2
import ResourcefulTesting
import Testing

/// An authorization server that echoes what it was sent in its `error_description` (or `error`):
/// no part of a secret reaches the error, however the echo is dressed.
@Suite struct ErrorDescriptionEchoTests {
    /// The description of the error for a refusal whose body is `fields`, the request having
    /// carried `secrets`.
    static func refusal(_ fields: [String: String], secrets: [String]) throws -> String {
        let body = try JSONEncoder().encode(fields)
        return AuthorizationServer.refusal((.badRequest, body, secrets), what: "the refresh_token request").description
    }

    @Test func aLongSecretCutAt200CharactersIsNotShownInPart() throws {
        let secret = String(repeating: "r7Qz-", count: 60)
        let text = try Self.refusal(["error": "invalid_grant", "error_description": "refresh token \(secret) was revoked"], secrets: [secret])
        let leaked = text.contains(String(secret.prefix(16)))
        #expect(!leaked, "part of the refresh token is in the error")
        #expect(text.contains("invalid_grant"))
    }

    @Test func controlCharactersInsideAnEchoedSecretDoNotHideIt() throws {
        let secret = "mock-secret-2e7"
        let text = try Self.refusal(["error": "invalid_client", "error_description": "bad secret mock-\u{07}secret-2e7"], secrets: [secret])
        let leaked = text.contains(secret)
        #expect(!leaked, "the client secret is in the error")
    }

    @Test func aFormEncodedEchoOfTheSecretIsLeftOut() throws {
        let secret = "p@ss+w/rd=x;y!z"
        let text = try Self.refusal(
            ["error": "invalid_client", "error_description": "client_secret=\(FormBody.escape(secret)) rejected"], secrets: [secret]
        )
        let leaked = text.contains(FormBody.escape(secret)) || text.contains("40ss%2Bw")
        #expect(!leaked, "the encoded client secret is in the error")
    }

    @Test func aSecretSentAsTheErrorCodeIsLeftOut() throws {
        let token = "rt-8c1d0e4f77a2"
        let text = try Self.refusal(["error": token], secrets: [token])
        let leaked = text.contains(token)
        #expect(!leaked, "the refresh token is in the error")
    }

    @Test func aDescriptionIsNeverShownOnlyTheCode() throws {
        let text = try Self.refusal(
            ["error": "invalid_grant", "error_description": "The refresh token has expired."], secrets: ["rt-8c1d0e4f77a2b9"]
        )
        #expect(!text.contains("The refresh token has expired."))
        #expect(text.contains("invalid_grant"))
    }

    @Test func anEchoOfTheBasicHeaderIsLeftOut() async throws {
        let secret = "mock-secret-2e7"
        let basic = Data("c:\(secret)".utf8).base64EncodedString()
        try await MockServer.withTransport { server, transport in
            server.stub(
                .post, "/token",
                .json(raw: #"{"error": "invalid_client", "error_description": "Authorization: Basic \#(basic)"}"#, status: .unauthorized)
            )
            let storage = try await OAuth2AuthenticationStorage(
                settings: OAuth2Settings(clientID: "c", tokenEndpoint: server.baseURL.appendingPathComponent("token")),
                transport: transport, clientSecret: InMemorySecrets(["c-client-secret": secret])
            )
            var text = ""
            do {
                _ = try await storage.authenticationHeader(for: "s")
            } catch {
                text = "\(error)"
            }
            let leaked = text.contains(basic)
            #expect(!leaked, "the Basic credential is in the error")
            #expect(text.contains("invalid_client"))
        }
    }
}
