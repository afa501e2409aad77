import Foundation
import ProcessTestSupport
import Testing

/// `resourceful credentials`, run as an operator runs it.
@Suite struct CredentialsCommandTests {
    /// A config directory with an environment `x` for the service `billing` whose credentials come
    /// from `storages`, files under `secrets`; everything readable by other users.
    private func setUp(storages: String, optional: String) throws -> (config: String, secrets: String) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("credentials-cli-\(UUID().uuidString)")
        let secrets = root.appendingPathComponent("secrets")
        try FileManager.default.createDirectory(at: secrets, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: root.path)
        let json = #"""
            {"baseURL": "https://api.example.com", "service": "billing",
             "authentication": {"storages": \#(storages), "optional": \#(optional), "file": {"directory": "\#(secrets.path)"}}}
            """#
        try Data(json.utf8).write(to: root.appendingPathComponent("x.json"))
        return (root.path, secrets.path)
    }

    @Test func tellsWhichStorageHasTheCredentialWithoutPrintingIt() async throws {
        let (config, secrets) = try setUp(storages: #"["file", "environment"]"#, optional: #"["file"]"#)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let result = try await Command.run(
            resourcefulTool, ["credentials", "--env", "x", "--config-directory", config],
            environment: ["RESOURCEFUL_AUTH_BILLING_TOKEN": "s3cr3t-cli-token"]
        )
        #expect(result.status == 0)
        #expect(result.output.contains("file (optional): file \(secrets)/billing: does not exist"))
        #expect(result.output.contains("environment: a credential for billing"))
        #expect(!result.output.contains("s3cr3t"))

        let none = try await Command.run(resourcefulTool, ["credentials", "--env", "x", "--config-directory", config])
        #expect(none.status == 1)
        #expect(none.output.contains("environment: none for billing"))
    }

    /// A file the program may not read: as root, which reads any file, the tool runs as `nobody`.
    @Test func anUnreadableFileIsPermissionDenied() async throws {
        let (config, secrets) = try setUp(storages: #"["file"]"#, optional: "[]")
        defer { try? FileManager.default.removeItem(atPath: config) }
        let file = "\(secrets)/billing"
        try Data("s3cr3t-file-token".utf8).write(to: URL(fileURLWithPath: file))
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: file)
        let arguments = ["credentials", "--env", "x", "--config-directory", config]
        let result = geteuid() == 0
            ? try await Command.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", resourcefulTool] + arguments)
            : try await Command.run(resourcefulTool, arguments)
        #expect(result.status == 3)
        #expect(result.output.contains("file: file \(file): permission denied"))
        #expect(!result.output.contains("s3cr3t"))
    }

    /// With several services, `--service` asks the storages that service's calls ask, for its
    /// credential service; one the file does not describe is a configuration error (2).
    @Test func serviceSelectsTheStoragesACallToItAsks() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("credentials-cli-\(UUID().uuidString)")
        let secrets = root.appendingPathComponent("secrets")
        try FileManager.default.createDirectory(at: secrets, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: root.path)
        defer { try? FileManager.default.removeItem(at: root) }
        let json = #"""
            {"baseURL": "https://api.example.com", "service": "billing",
             "authentication": {"storages": ["environment"]},
             "services": {"users": {"baseURL": "https://users.example.com", "service": "users-api",
                                    "authentication": {"storages": ["file"], "file": {"directory": "\#(secrets.path)"}}}}}
            """#
        try Data(json.utf8).write(to: root.appendingPathComponent("x.json"))
        let file = secrets.appendingPathComponent("users-api")
        try Data("s3cr3t-users-token".utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        let arguments = ["credentials", "--env", "x", "--config-directory", root.path]

        let users = try await Command.run(resourcefulTool, arguments + ["--service", "users"])
        #expect(users.status == 0, "\(users.output)")
        #expect(users.output.contains("file: a credential for users-api"))
        #expect(!users.output.contains("environment"))
        #expect(!users.output.contains("s3cr3t"))

        // The top level: its own storages and service.
        let top = try await Command.run(resourcefulTool, arguments)
        #expect(top.status == 1)
        #expect(top.output.contains("environment: none for billing"))

        let unknown = try await Command.run(resourcefulTool, arguments + ["--service", "payments"])
        #expect(unknown.status == 5)
        #expect(unknown.output.contains("services.payments"))
        #expect(unknown.output.contains("users"))
    }
}
