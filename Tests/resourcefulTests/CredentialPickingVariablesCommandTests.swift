import Foundation
import HTTPTypes
import ProcessTestSupport
import ResourcefulTesting
import Testing

/// A variable that picks which stored credential goes to the configuration file's server (its
/// `service`, a service's `service`) is refused before anything is read or sent: set by something
/// other than the user who chose the file, it would send another service's token to this one's host.
@Suite struct CredentialPickingVariablesCommandTests {
    /// A chosen folder holding `x.json`: `users-api` at the top level and `crm` on the same
    /// server, their tokens (and `billing-api`'s) in files under `secrets`.
    static func folder(base: String) throws -> (folder: URL, secrets: URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("credential-picking-\(UUID().uuidString)")
        let secrets = folder.appendingPathComponent("secrets")
        try FileManager.default.createDirectory(at: secrets, withIntermediateDirectories: true)
        for (service, token) in [("users-api", "users-token-1a7"), ("crm-api", "crm-token-5d2"), ("billing-api", "billing-token-9f3")] {
            let file = secrets.appendingPathComponent(service)
            try Data("\(token)\n".utf8).write(to: file)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        }
        let json = #"""
            {"baseURL": "\#(base)", "service": "users-api",
             "authentication": {"storages": ["file"], "file": {"directory": "\#(secrets.path)"}},
             "services": {"crm": {"service": "crm-api"}}}
            """#
        try Data(json.utf8).write(to: folder.appendingPathComponent("x.json"))
        return (folder, secrets)
    }

    @Test(arguments: [("RESOURCEFUL_SERVICE", [String]()), ("RESOURCEFUL_SERVICES_CRM_SERVICE", ["--service", "crm"])])
    func aVariableNamingAnotherServiceIsRefusedBeforeAnythingIsSent(variable: String, picked: [String]) async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/me", .json(raw: #"{"ok": true}"#))
            let (folder, _) = try Self.folder(base: "\(server.baseURL.absoluteString)/v1")
            defer { try? FileManager.default.removeItem(at: folder) }
            let refused = try await CommandCredentialVariablesTests.run(folder, ["show", "me"] + picked, environment: [variable: "billing-api"])
            #expect(refused.status == 5, "\(refused.output)")
            #expect(refused.output.contains(variable), "\(refused.output)")
            #expect(!refused.output.contains("token-"), "\(refused.output)")
            #expect(server.requests.isEmpty, "nothing was sent")

            // Without the variable, the file's own service's token goes to its server.
            let own = try await CommandCredentialVariablesTests.run(folder, ["show", "me"] + picked, environment: [:])
            #expect(own.status == 0, "\(own.output)")
            let sent = server.requests.map { $0.headerFields[.authorization] }
            #expect(sent == [picked.isEmpty ? "Bearer users-token-1a7" : "Bearer crm-token-5d2"])
        }
    }
}
