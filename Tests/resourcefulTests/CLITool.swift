import Foundation
import ProcessTestSupport
import ResourcefulTesting

/// The `resourceful` tool, run as a user runs it, against a MockServer.
enum CLITool {
    /// A config directory whose `test` environment points at `server`.
    static func configDirectory(for server: MockServer) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let json = #"{"baseURL": "\#(server.baseURL.absoluteString)/v1", "service": "cli-test", "logging": {"maskedBodyKeys": ["password"]}}"#
        try Data(json.utf8).write(to: directory.appendingPathComponent("test.json"))
        return directory.path
    }

    /// Runs the tool with `arguments`, against `server`'s `test` environment.
    static func run(_ server: MockServer, _ arguments: [String], keepSessionBus: Bool = false) async throws -> Command.Result {
        try await Command.run(
            resourcefulTool, arguments + ["--env", "test", "--config-directory", try configDirectory(for: server)],
            keepSessionBus: keepSessionBus
        )
    }
}
