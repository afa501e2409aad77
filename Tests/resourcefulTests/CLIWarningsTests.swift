import Foundation
import HTTPTypes
import ProcessTestSupport
import ResourcefulTesting
import Testing

/// Warnings reach the person without `--verbose`: they are the only guard on some of what a
/// call uses (a credential file others can read, a renewal without the lock other processes share).
@Suite struct CLIWarningsTests {
    @Test func aCredentialFileOthersCanReadIsWarnedAboutWithoutVerbose() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-cli-warn-\(UUID().uuidString)")
        let secrets = folder.appendingPathComponent("secrets")
        try FileManager.default.createDirectory(at: secrets, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let token = "TOK-\(UUID().uuidString)"
        let file = secrets.appendingPathComponent("cli-test")
        try Data(token.utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/items/1", .json(raw: #"{"id": 1}"#))
            let json = #"""
                {"baseURL": "\#(server.baseURL.absoluteString)/v1", "service": "cli-test",
                 "authentication": {"storages": ["file"], "file": {"directory": "\#(secrets.path)"}}}
                """#
            try Data(json.utf8).write(to: folder.appendingPathComponent("test.json"))
            let result = try await Command.run(
                resourcefulTool, ["show", "items/1", "--env", "test", "--config-directory", folder.path]
            )
            #expect(result.status == 0, "\(result.output.suffix(500))")
            #expect(server.requests.count == 1)
            #expect(result.output.contains("chmod 600"))
            #expect(!result.output.contains(token))
        }
    }
}
