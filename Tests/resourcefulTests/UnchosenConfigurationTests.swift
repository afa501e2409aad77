import Foundation
import HTTPTypes
import ProcessTestSupport
import ResourcefulTesting
import Testing

/// A configuration the user did not choose, found in the working directory's `Configs` (a cloned
/// repository's), sends no credential to the host it names until the user chooses it.
@Suite struct UnchosenConfigurationTests {
    /// A folder holding `Configs/x.json` for `server`, with `authentication`.
    static func workingDirectory(_ server: MockServer, authentication: String) throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("unchosen-\(UUID().uuidString)")
        let configs = root.appendingPathComponent("Configs")
        try FileManager.default.createDirectory(at: configs, withIntermediateDirectories: true)
        let json = #"{"baseURL": "\#(server.baseURL.absoluteString)/v1", "service": "cloned", "authentication": \#(authentication)}"#
        try Data(json.utf8).write(to: configs.appendingPathComponent("x.json"))
        return root
    }

    /// The tool run in `directory` with `arguments`, `RESOURCEFUL_CONFIG_DIR` unset unless
    /// `environment` sets it.
    static func run(in directory: URL, _ arguments: [String], environment: [String: String] = [:]) async throws -> Command.Result {
        let unset = environment["RESOURCEFUL_CONFIG_DIR"] == nil ? ["-u", "RESOURCEFUL_CONFIG_DIR"] : []
        return try await Command.run(
            "/usr/bin/env", unset + ["/bin/sh", "-c", #"cd "$1" && shift && exec "$@""#, "sh", directory.path, resourcefulTool] + arguments,
            environment: environment
        )
    }

    @Test func aCredentialIsNotSentToTheHostOfAConfigurationFoundInTheWorkingDirectory() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/me", .json(raw: #"{"ok": true}"#))
            let directory = try Self.workingDirectory(server, authentication: #"{"storages": ["environment"]}"#)
            defer { try? FileManager.default.removeItem(at: directory) }
            let secret = ["RESOURCEFUL_AUTH_CLONED_TOKEN": "victim-token-8d1"]
            let refused = try await Self.run(in: directory, ["show", "me", "--env", "x"], environment: secret)
            #expect(refused.status == 5, "the configuration could not be loaded: \(refused.output)")
            #expect(refused.output.contains("Configs/x.json"), "\(refused.output)")
            #expect(refused.output.contains("--config-directory"), "\(refused.output)")
            #expect(!refused.output.contains("victim-token"))
            #expect(server.requests.isEmpty, "a request reached the host the configuration names")

            // Chosen by the option (relative or not), or by an absolute variable: the call goes,
            // with its credential.
            let chosen = try await Self.run(in: directory, ["show", "me", "--env", "x", "--config-directory", "Configs"], environment: secret)
            #expect(chosen.status == 0, "\(chosen.output)")
            var variables = secret
            variables["RESOURCEFUL_CONFIG_DIR"] = directory.appendingPathComponent("Configs").path
            let byVariable = try await Self.run(in: directory, ["show", "me", "--env", "x"], environment: variables)
            #expect(byVariable.status == 0, "\(byVariable.output)")
            #expect(server.requests.map { $0.headerFields[.authorization] } == ["Bearer victim-token-8d1", "Bearer victim-token-8d1"])
        }
    }

    @Test(arguments: ["Configs", "./Configs", ""])
    func aRelativeOrEmptyConfigDirectoryVariableDoesNotChooseTheWorkingDirectorysConfigs(_ variable: String) async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/me", .json(raw: #"{"ok": true}"#))
            let directory = try Self.workingDirectory(server, authentication: #"{"storages": ["environment"]}"#)
            defer { try? FileManager.default.removeItem(at: directory) }
            // Set once (`export RESOURCEFUL_CONFIG_DIR=Configs`), it lives on into every folder.
            let variables = ["RESOURCEFUL_AUTH_CLONED_TOKEN": "victim-token-3b7", "RESOURCEFUL_CONFIG_DIR": variable]
            for verb in ["show", "index", "delete"] {
                let refused = try await Self.run(in: directory, [verb, "me", "--env", "x"], environment: variables)
                #expect(refused.status == 5, "\(verb): \(refused.output)")
                #expect(refused.output.contains("Configs/x.json"), "\(refused.output)")
                #expect(refused.output.contains("--config-directory Configs") && refused.output.contains("absolute"), "\(refused.output)")
                #expect(!refused.output.contains("victim-token"))
            }
            #expect(server.requests.isEmpty, "a request reached the host the configuration names")
        }
    }

    @Test func aConfigurationWithoutCredentialsStillWorksFromTheWorkingDirectory() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/me", .json(raw: #"{"ok": true}"#))
            let directory = try Self.workingDirectory(server, authentication: #"{"storages": []}"#)
            defer { try? FileManager.default.removeItem(at: directory) }
            let result = try await Self.run(in: directory, ["show", "me", "--env", "x"])
            #expect(result.status == 0, "\(result.output)")
            #expect(server.requests.count == 1)
        }
    }

    @Test func anOAuth2LoginIsRefusedBeforeItSendsAnything() async throws {
        try await MockServer.withRunning { server in
            let endpoint = server.baseURL.absoluteString
            let directory = try Self.workingDirectory(
                server,
                authentication: #"{"storages": ["oauth2"], "file": {"directory": "/tmp"}, "oauth2": {"clientId": "c", "tokenEndpoint": "\#(endpoint)/token", "deviceAuthorizationEndpoint": "\#(endpoint)/device", "clientSecret": {"storage": "file", "name": "c-secret"}}}"#
            )
            defer { try? FileManager.default.removeItem(at: directory) }
            let result = try await Self.run(in: directory, ["login", "--service", "cloned", "--env", "x"])
            #expect(result.status != 0)
            #expect(result.output.contains("Configs/x.json") && result.output.contains("--config-directory"), "\(result.output)")
            #expect(server.requests.isEmpty)
        }
    }
}
