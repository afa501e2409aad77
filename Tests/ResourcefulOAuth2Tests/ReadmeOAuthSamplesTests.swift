import Foundation
import ProcessTestSupport
import Resourceful
import ResourcefulKeyring
import ResourcefulOAuth2
import Testing

/// The README's OAuth 2 samples, their configuration read from the README itself, run against
/// django-oauth-toolkit.
@Suite(.oauthServer, .serialized) struct ReadmeOAuthSamplesTests {
    /// The `json` blocks of the README's OAuth 2 section, in order.
    static func jsonSamples() throws -> [String] {
        let readme = try String(contentsOf: PythonTools.root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "## OAuth 2:").dropFirst().first?.components(separatedBy: "\n## ").first)
        return section.components(separatedBy: "```json\n").dropFirst().compactMap { $0.components(separatedBy: "```").first }
    }

    @Test func theServiceSampleCallsWithClientCredentials() async throws {
        let server = try #require(OAuthServer.current)
        let sample = try #require(try Self.jsonSamples().first)
            .replacingOccurrences(of: "https://auth.example.com", with: server.issuer)
            .replacingOccurrences(of: "billing-service", with: OAuthServer.serviceClient.id)
            .replacingOccurrences(of: #"["invoices:read"]"#, with: #"["read"]"#)
        let config = try TestConfig(secrets: ["billing-client-secret": OAuthServer.serviceClient.secret]) { secrets in
            """
            {"baseURL": "\(server.issuer)/api", "service": "billing-api",
             \(sample.replacingOccurrences(of: #""storages": ["oauth2"],"#, with: #""storages": ["oauth2"], "file": {"directory": "\#(secrets)"},"#))}
            """
        }
        defer { config.remove() }
        // The sample's Swift, with the test's configuration folder.
        let api = API(dependencies: try await APIDependencies.live(
            environment: "x", configDirectory: config.directory.path, environmentVariables: [:], storageFactories: [OAuth2StorageFactory()]
        ))
        let me: Me = try await api.call(AdHocRequest<Me, Empty>(.show, "me"))
        try await api.shutdown()
        #expect(me.client_id == OAuthServer.serviceClient.id)
        #expect(me.scope == "read")
    }

    @Test func theDeviceSampleLogsInWithTheCommand() async throws {
        let server = try #require(OAuthServer.current)
        let account = "readme-\(UUID().uuidString)"
        let sample = try #require(try Self.jsonSamples().dropFirst().first)
            .replacingOccurrences(of: "https://crm.example.com/api", with: "\(server.issuer)/api")
            .replacingOccurrences(of: "https://auth.example.com", with: server.issuer)
            .replacingOccurrences(of: "crm-cli", with: OAuthServer.deviceClient)
            .replacingOccurrences(of: #""account": "ada""#, with: #""account": "\#(account)""#)
        let config = try TestConfig { _ in #"{"baseURL": "https://api.example", "service": "top", \#(sample)}"# }
        defer { config.remove() }
        let common = ["--service", "crm", "--env", "x", "--config-directory", config.directory.path]
        let login = try RunningCommand(resourcefulTool, ["login"] + common)
        let prompt = try #require(try await login.line { $0.contains("enter the code") })
        try await server.approveDevice(userCode: try #require(OAuthServer.userCode(in: prompt)))
        let result = try await login.finish()
        #expect(result.status == 0 && result.output.contains("Logged in to crm-api"))
        let status = try await Command.run(resourcefulTool, ["status"] + common, keepSessionBus: true)
        #expect(status.status == 0)
        let logout = try await Command.run(resourcefulTool, ["logout"] + common, keepSessionBus: true)
        #expect(logout.output.contains("Revoked and removed"))
    }
}
