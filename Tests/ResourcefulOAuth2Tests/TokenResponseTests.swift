import Foundation
import HTTPTypes
import Resourceful
import ResourcefulOAuth2
import ResourcefulTesting
import Testing

/// Token endpoints that answer badly, or not at all: each a typed error, nothing cached, no trap.
@Suite struct TokenResponseTests {
    struct Bad: CustomTestStringConvertible, Sendable {
        var name: String
        var body: String
        var testDescription: String { name }
    }

    static let bad: [Bad] = [
        Bad(name: "too large", body: #"{"access_token": "a", "token_type": "Bearer", "pad": ""# + String(repeating: "x", count: 70_000) + #""}"#),
        Bad(name: "not JSON", body: "<html>token</html>"),
        Bad(name: "an array", body: #"["access_token"]"#),
        Bad(name: "no access_token", body: #"{"token_type": "Bearer", "expires_in": 60}"#),
        Bad(name: "an empty access_token", body: #"{"access_token": "", "token_type": "Bearer"}"#),
        Bad(name: "a token with a line break", body: #"{"access_token": "a\r\nX-Evil: 1", "token_type": "Bearer"}"#),
        Bad(name: "a MAC token", body: #"{"access_token": "tok-1a", "token_type": "mac"}"#),
        Bad(name: "no token_type", body: #"{"access_token": "tok-1a"}"#),
        Bad(name: "a negative expires_in", body: #"{"access_token": "tok-1a", "token_type": "Bearer", "expires_in": -1}"#),
        Bad(name: "a zero expires_in", body: #"{"access_token": "tok-1a", "token_type": "Bearer", "expires_in": 0}"#),
        Bad(name: "an absurd expires_in", body: #"{"access_token": "tok-1a", "token_type": "Bearer", "expires_in": 99999999999}"#),
        Bad(name: "a fractional expires_in", body: #"{"access_token": "tok-1a", "token_type": "Bearer", "expires_in": 1.5}"#),
        Bad(name: "a text expires_in", body: #"{"access_token": "tok-1a", "token_type": "Bearer", "expires_in": "soon"}"#),
        Bad(name: "a boolean expires_in", body: #"{"access_token": "tok-1a", "token_type": "Bearer", "expires_in": true}"#),
        Bad(name: "a number refresh_token", body: #"{"access_token": "tok-1a", "token_type": "Bearer", "refresh_token": 12}"#),
    ]

    /// An API whose OAuth 2 token endpoint is `server`'s `/token`.
    static func api(_ server: MockServer, transport: any HTTPTransport, timeout: Duration = .seconds(30)) async throws -> API {
        let secrets = InMemorySecrets(["c-client-secret": "mock-secret-2e7"])
        var settings = OAuth2Settings(clientID: "c", tokenEndpoint: server.baseURL.appendingPathComponent("token"))
        settings.clientSecretStorage = "memory"
        let storage = try await OAuth2AuthenticationStorage(settings: settings, transport: transport, clientSecret: secrets, timeout: timeout)
        var config = APIConfig(baseURL: server.baseURL.appendingPathComponent("v1"), service: "mock-api")
        config.timeout = timeout
        config.retry.maxAttempts = 1
        return API(dependencies: APIDependencies(apiConfig: config, authenticationStorage: storage, transport: transport))
    }

    @Test(arguments: bad)
    func anUnusableTokenResponseIsATypedErrorAndNothingIsCached(_ bad: Bad) async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/token", .json(raw: bad.body), .json(raw: bad.body))
            server.stub(.get, "/v1/me", .json(raw: #"{"client_id": "c"}"#))
            let api = try await Self.api(server, transport: transport)
            for attempt in 0..<2 {
                let error = await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<Me, Empty>(.show, "me")) }
                #expect(error?.kind == .authentication)
                #expect(error?.description.contains("OAuth 2") == true)
                #expect(error?.description.contains("mock-secret-2e7") == false)
                // The second call meets the answer's error again, not asked for within the back-off.
                #expect(error?.description.contains("refusalBackoff") == (attempt == 1))
            }
            // Nothing was cached, nothing reached the API; the server was asked once.
            #expect(server.requests.filter { $0.path == "/token" }.count == 1)
            #expect(!server.requests.contains { $0.path == "/v1/me" })
        }
    }

    @Test func aTokenEndpointThatHangsIsBoundedByTheCallsDeadline() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/token", MockResponse.json(raw: #"{"access_token": "late", "token_type": "Bearer"}"#).delayed(by: .seconds(120)))
            let api = try await Self.api(server, transport: transport, timeout: .seconds(2))
            let start = ContinuousClock.now
            let error = await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<Me, Empty>(.show, "me")) }
            #expect(error?.kind == .timeout)
            // Well before the server would answer.
            #expect(ContinuousClock.now - start < .seconds(60))
        }
    }

    @Test func anErrorDescriptionHoldingASecretIsLeftOut() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/token", .json(raw: #"{"error": "invalid_client", "error_description": "bad secret mock-secret-2e7"}"#, status: .unauthorized))
            let api = try await Self.api(server, transport: transport)
            let error = await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<Me, Empty>(.show, "me")) }
            #expect(error?.description.contains("invalid_client") == true)
            #expect(error?.description.contains("mock-secret-2e7") == false)
        }
    }

    @Test func aTokenIsReusedUntilItIsDue() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/token", .json(raw: #"{"access_token": "tok-9f", "token_type": "bearer", "expires_in": "3600"}"#))
            server.stub(.get, "/v1/me", .json(raw: #"{"client_id": "c"}"#), .json(raw: #"{"client_id": "c"}"#))
            let api = try await Self.api(server, transport: transport)
            _ = try await api.call(AdHocRequest<Me, Empty>(.show, "me"))
            _ = try await api.call(AdHocRequest<Me, Empty>(.show, "me"))
            // Compared outside `#expect`, whose failure would print the credentials; the requests
            // are picked by a loop, not a closure, as a closure filtering them right after an
            // `#expect` holding a similar one picked the token request here.
            var tokenRequests: [RecordedRequest] = []
            var sent: [String?] = []
            for request in server.requests {
                if request.path == "/token" { tokenRequests.append(request) }
                if request.path == "/v1/me" { sent.append(request.headerFields[.authorization]) }
            }
            #expect(tokenRequests.count == 1)
            let sentTheToken = sent == ["Bearer tok-9f", "Bearer tok-9f"]
            #expect(sentTheToken, "the calls sent another credential than the token")
            let token = try #require(tokenRequests.first)
            let basic = token.headerFields[.authorization]?.hasPrefix("Basic ") == true
            #expect(basic)
            #expect(String(decoding: token.body, as: UTF8.self) == "grant_type=client_credentials")
        }
    }
}
