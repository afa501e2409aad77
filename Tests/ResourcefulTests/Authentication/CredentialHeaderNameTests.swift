import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

/// `authentication.headerName`: the stored credential goes in a field of the API's choosing
/// (an API key header), and that field is treated as `Authorization` is: masked in logs and
/// cURL exports, dropped before another origin.
@Suite struct CredentialHeaderNameTests {
    static let key = "pk-HEADERNAME-SECRET-9"
    static let field = HTTPField.Name("X-Partner-Code")!

    private static func configure(_ config: inout APIConfig) {
        config.authentication.headerName = "X-Partner-Code"
    }

    @Test func theCredentialGoesInTheNamedFieldAndIsMasked() async throws {
        try await Harness.run(authorization: Self.key, configure: Self.configure) { harness in
            harness.server.stub(.get, "/v1/reports", .json(raw: "[]"))
            let request = AdHocRequest<[String], Empty>(.index, "reports")
            _ = try await harness.api.call(request)
            let sent = try #require(harness.server.requests.last)
            #expect(sent.headerFields[Self.field] == Self.key)
            #expect(sent.headerFields[.authorization] == nil)
            #expect(!harness.logText.contains(Self.key))
            #expect(harness.logText.contains("X-Partner-Code") || harness.logText.contains("x-partner-code"))
            let curl = try await harness.api.curl(for: request)
            #expect(curl.contains("--header 'X-Partner-Code: ***'"))
            #expect(!curl.contains(Self.key))
        }
    }

    @Test func theNamedFieldDoesNotFollowARedirectToAnotherOrigin() async throws {
        try await Harness.run(authorization: Self.key, configure: Self.configure) { harness in
            try await MockServer.withRunning { other in
                other.stub(.get, "/elsewhere", .status(.noContent))
                harness.server.stub(.get, "/v1/x", MockResponse(status: .found, headerFields: [.location: other.baseURL.absoluteString + "/elsewhere"]))
                _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x"))
                #expect(harness.server.requests.first?.headerFields[Self.field] == Self.key)
                let arrived = try #require(other.requests.first)
                #expect(arrived.headerFields[Self.field] == nil, "the credential followed the redirect")
            }
        }
    }

    @Test func readFromTheConfigurationAndValidated() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-header-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let good = #"{"baseURL": "https://api.example.com", "service": "s", "authentication": {"headerName": "X-API-Key"}}"#
        try Data(good.utf8).write(to: directory.appendingPathComponent("good.json"))
        let config = try await APIConfig.load(environment: "good", configDirectory: directory.path, environmentVariables: [:])
        #expect(config.authentication.headerName == "X-API-Key")

        let bad = #"{"baseURL": "https://api.example.com", "service": "s", "authentication": {"headerName": "X API Key"}}"#
        try Data(bad.utf8).write(to: directory.appendingPathComponent("bad.json"))
        let error = await #expect(throws: APIError.self) {
            try await APIConfig.load(environment: "bad", configDirectory: directory.path, environmentVariables: [:])
        }
        #expect(error?.kind == .invalidConfiguration)
        #expect("\(String(describing: error))".contains("authentication.headerName"))

        var inCode = APIConfig(baseURL: URL(string: "https://api.example.com")!, service: "s")
        inCode.authentication.headerName = "bad\nname"
        let api = API(dependencies: APIDependencies(apiConfig: inCode, authenticationStorage: InMemoryAuthenticationStorage(), transport: StubTransport { _ in throw CancellationError() }))
        let refused = await #expect(throws: APIError.self) { try await api.call(AdHocRequest<Empty, Empty>(.show, "x")) }
        #expect(refused?.kind == .invalidConfiguration)
    }
}
