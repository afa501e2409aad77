import Foundation
import ProcessTestSupport
import Testing

/// `resourceful demo` as a person runs it after `make install`: from any folder.
@Suite struct DemoCommandTests {
    @Test func theDemoRunsOutsideACheckoutWithABuiltInConfiguration() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try await Command.run("/bin/sh", ["-c", "cd \"$1\" && exec \"$2\" demo", "sh", folder.path, resourcefulTool])
        #expect(result.status == 0, "\(result.output)")
        for verb in ["== index users", "== show users/1", "== create users", "== delete users/"] {
            #expect(result.output.contains(verb), "\(verb)")
        }
        // What the show after the delete met, in words: no Swift type names.
        #expect(result.output.contains("after delete → "))
        #expect(!result.output.contains("APIError") && !result.output.contains("noSessionBus"), "\(result.output)")
    }

    @Test func aConfigurationNamedAndMissingIsAConfigurationError() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try await Command.run(resourcefulTool, ["demo", "--env", "nope", "--config-directory", folder.path])
        #expect(result.status == 5, "\(result.output)")
        #expect(result.output.hasPrefix("resourceful: ") && result.output.contains("nope.json does not exist"), "\(result.output)")
        #expect(!result.output.contains("APIError"))
    }
}
