import Foundation
import HTTPTypes
import Resourceful
import ResourcefulOAuth2
import ResourcefulTesting
import Testing

/// Many client-credentials flows at once, each with its own server, client secret and token, as
/// when the whole target runs in parallel: every server records its own flow's three requests, in
/// order, each carrying its own flow's credential and no other.
@Suite struct ConcurrentTokenFlowTests {
    /// Which flow a credential belongs to, named without the credential itself.
    static func owner(_ value: String?) -> String {
        guard let value else { return "none" }
        if value.hasPrefix("Bearer flow-token-") { return "token of flow \(value.dropFirst("Bearer flow-token-".count))" }
        if value.hasPrefix("Basic "), let data = Data(base64Encoded: String(value.dropFirst("Basic ".count))) {
            let pair = String(decoding: data, as: UTF8.self)
            if pair.hasPrefix("c:flow-secret-") { return "secret of flow \(pair.dropFirst("c:flow-secret-".count))" }
        }
        return "another credential"
    }

    @Test(arguments: 0..<100)
    func eachServerSeesOnlyItsOwnFlowsCredentials(_ flow: Int) async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/token", .json(raw: #"{"access_token": "flow-token-\#(flow)", "token_type": "bearer", "expires_in": 3600}"#))
            server.stub(.get, "/v1/me", .json(raw: #"{"client_id": "c"}"#))
            var settings = OAuth2Settings(clientID: "c", tokenEndpoint: server.baseURL.appendingPathComponent("token"))
            settings.clientSecretStorage = "memory"
            let storage = try await OAuth2AuthenticationStorage(
                settings: settings, transport: transport, clientSecret: InMemorySecrets(["c-client-secret": "flow-secret-\(flow)"])
            )
            var config = APIConfig(baseURL: server.baseURL.appendingPathComponent("v1"), service: "mock-api")
            config.retry.maxAttempts = 1
            let api = API(dependencies: APIDependencies(apiConfig: config, authenticationStorage: storage, transport: transport))
            _ = try await api.call(AdHocRequest<Me, Empty>(.show, "me"))
            _ = try await api.call(AdHocRequest<Me, Empty>(.show, "me"))
            // Summed up without the credentials, so that a failure prints none; no closure inside
            // #expect (see scripts/check-shared-closures.py).
            var seen: [String] = []
            for request in server.requests {
                seen.append("\(request.method.rawValue) \(request.path) with \(Self.owner(request.headerFields[.authorization]))")
            }
            let expected = [
                "POST /token with secret of flow \(flow)",
                "GET /v1/me with token of flow \(flow)",
                "GET /v1/me with token of flow \(flow)",
            ]
            #expect(seen == expected)
        }
    }
}
