import Foundation
import ProcessTestSupport
import Testing

/// `resourceful generate`: writes the files, reports what it could not express, and `--check`
/// tells whether the files on disk are what the document generates.
@Suite struct GenerateCommandTests {
    static let specs = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appending(path: "ResourcefulOpenAPITests/Specs")

    private func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appending(path: "resourceful-generate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test func generateWritesTheFilesAndCheckFindsThemCurrent() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let spec = Self.specs.appending(path: "users.yaml").path
        let generated = try await Command.run(resourcefulTool, ["generate", "--openapi", spec, "--output", folder.path, "--namespace", "Users"])
        #expect(generated.status == 0, "\(generated.output)")
        #expect(generated.output.contains("Generated 11 requests and 5 schema types"))
        #expect(generated.output.contains("warning: #/paths/~1reports~1{kind}/get/parameters/1: a cookie parameter"))
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(files == ["UsersRequests.swift", "UsersSchemas.swift"])

        let current = try await Command.run(resourcefulTool, ["generate", "--openapi", spec, "--output", folder.path, "--namespace", "Users", "--check"])
        #expect(current.status == 0, "\(current.output)")

        let requests = folder.appending(path: "UsersRequests.swift")
        try Data((try String(contentsOf: requests, encoding: .utf8) + "// edited\n").utf8).write(to: requests)
        let stale = try await Command.run(resourcefulTool, ["generate", "--openapi", spec, "--output", folder.path, "--namespace", "Users", "--check"])
        #expect(stale.status == 1)
        #expect(stale.output.contains("out of date in \(folder.path): UsersRequests.swift"))
        #expect(try String(contentsOf: requests, encoding: .utf8).hasSuffix("// edited\n"), "--check wrote a file")
    }

    @Test func aMissingDocumentOrConfigurationIsSaidInWords() async throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-nope-\(UUID().uuidString).yaml").path
        let document = try await Command.run(resourcefulTool, ["generate", "--openapi", missing, "--output", "/tmp/unused"])
        #expect(document.status == 2)
        #expect(document.output == "resourceful: cannot read \(missing) (--openapi): it does not exist\n", "\(document.output)")
        #expect(!document.output.contains("could not be completed"))
    }

    @Test func onlyTheNamedOperationsAtTheGivenAccessLevel() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let spec = Self.specs.appending(path: "users.yaml").path
        let result = try await Command.run(
            resourcefulTool,
            ["generate", "--openapi", spec, "--output", folder.path, "--operation", "showUser", "--operation", "deleteUser", "--access-level", "internal"]
        )
        #expect(result.status == 0, "\(result.output)")
        let requests = try String(contentsOf: folder.appending(path: "Requests.swift"), encoding: .utf8)
        #expect(requests.contains("\nstruct ShowUser: ResourceRequest {"))
        #expect(requests.contains("\nstruct DeleteUser: ResourceRequest {"))
        #expect(!requests.contains("ListUsers"))
    }

    @Test(arguments: [
        (["--openapi", "/nonexistent/openapi.yaml"], "cannot read /nonexistent/openapi.yaml"),
        (["--openapi", "/etc/hostname"], "cannot read the OpenAPI document"),
    ])
    func anUnreadableDocumentExitsWithTwo(arguments: [String], message: String) async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try await Command.run(resourcefulTool, ["generate", "--output", folder.path] + arguments)
        #expect(result.status == 2)
        #expect(result.output.contains(message), "\(result.output)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test func aMisspeltConfigurationKeyExitsWithTwoAndWritesNothing() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appending(path: "resourceful-openapi.json")
        try Data(#"{"namespace": "Users", "acessLevel": "internal"}"#.utf8).write(to: config)
        let output = folder.appending(path: "out")
        let result = try await Command.run(
            resourcefulTool, ["generate", "--openapi", Self.specs.appending(path: "users.yaml").path, "--output", output.path, "--config", config.path])
        #expect(result.status == 2, "\(result.output)")
        #expect(result.output.contains("`acessLevel` is not a known key"), "\(result.output)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    @Test func aBadAccessLevelIsAUsageError() async throws {
        let result = try await Command.run(resourcefulTool, ["generate", "--openapi", "x.yaml", "--output", "/tmp", "--access-level", "open"])
        #expect(result.status == 64)
        #expect(result.output.contains("--access-level must be public, package or internal"))
    }
}
