import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

/// The verb commands, run as a user runs them, against a MockServer.
@Suite struct ResourceCommandsTests {
    private func tool(_ server: MockServer, _ arguments: [String], keepSessionBus: Bool = false) async throws -> Command.Result {
        try await CLITool.run(server, arguments, keepSessionBus: keepSessionBus)
    }

    @Test func showPrintsPrettyJSON() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/users/42", .json(raw: #"{"name":"Ada","id":42,"tags":["a"]}"#))
            let result = try await tool(server, ["show", "users/42"])
            #expect(result.status == 0)
            #expect(result.output == "{\n  \"name\": \"Ada\",\n  \"id\": 42,\n  \"tags\": [\n    \"a\"\n  ]\n}\n")
            #expect(server.requests.first?.method == .get)
        }
    }

    @Test func indexSendsTextAndJSONParametersInTheQuery() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/users", .json(raw: "[]"))
            let result = try await tool(server, ["index", "users", "name=Ada Lovelace", "limit:=10", "active:=true"])
            #expect(result.status == 0)
            let items = try #require(server.requests.first).queryItems.map { "\($0.name)=\($0.value)" }.sorted()
            #expect(items == ["active=true", "limit=10", "name=Ada Lovelace"])
        }
    }

    @Test func createSendsDataFromAFile() async throws {
        try await MockServer.withRunning { server in
            server.route(.post, "/v1/users") { request in .json(raw: request.body, status: .created) }
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("user-\(UUID().uuidString).json")
            try Data(#"{"name": "Grace", "roles": ["admin"], "age": 85}"#.utf8).write(to: file)
            let result = try await tool(server, ["create", "users", "--data", "@\(file.path)"])
            #expect(result.status == 0)
            let sent = try #require(server.requests.first)
            #expect(sent.headerFields[.contentType] == "application/json")
            let body = try JSONSerialization.jsonObject(with: sent.body) as? [String: Any]
            #expect(body?["name"] as? String == "Grace")
            #expect(body?["age"] as? Int == 85)
            #expect(result.output.contains("\"roles\": [\n    \"admin\"\n  ]"))
        }
    }

    /// `--data @file` reads a regular file only: a FIFO (which would wait for a writer) or a
    /// device (which never ends) is refused at once with the local-file status, and nothing is sent.
    @Test(arguments: ["fifo", "/dev/zero", "missing"])
    func dataFromAnythingButARegularFileIsRefusedWithoutSending(kind: String) async throws {
        try await MockServer.withRunning { server in
            server.route(.post, "/v1/users") { request in .json(raw: request.body, status: .created) }
            var path = kind
            if kind != "/dev/zero" {
                path = FileManager.default.temporaryDirectory.appendingPathComponent("data-\(UUID().uuidString)").path
                if kind == "fifo" { #expect(mkfifo(path, 0o600) == 0) }
            }
            defer { if kind == "fifo" { unlink(path) } }
            let result = try await tool(server, ["create", "users", "--data", "@\(path)"])
            #expect(result.status == 9, "\(result.output)")
            #expect(result.output.contains("--data @\(path)"))
            #expect(server.requests.isEmpty)
        }
    }

    @Test func updateWithPatchAndDeleteWithNoContent() async throws {
        try await MockServer.withRunning { server in
            server.stub(.patch, "/v1/users/1", .json(raw: #"{"id":1}"#))
            server.stub(.delete, "/v1/users/1", .status(.noContent))
            let patched = try await tool(server, ["update", "users/1", "name=New", "--patch"])
            let deleted = try await tool(server, ["delete", "users/1"])
            #expect(patched.status == 0)
            #expect(deleted.status == 0)
            #expect(deleted.output.isEmpty)
            #expect(server.requests.map(\.method) == [.patch, .delete])
            #expect(server.requests.first?.bodyText == #"{"name":"New"}"#)
        }
    }

    @Test func exitCodesScriptsCanRelyOn() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/users/9", .json(raw: #"{"message":"no such user"}"#, status: .notFound))
            server.stub(.get, "/v1/gone", .closeConnection)
            let notFound = try await tool(server, ["show", "users/9"])
            #expect(notFound.status == 1)
            #expect(notFound.output.contains("404 Not Found"))
            #expect(notFound.output.contains("\"message\": \"no such user\""))
            #expect(try await tool(server, ["show", "gone"]).status == 4)
            let missingConfig = try await Command.run(resourcefulTool, ["show", "x", "--env", "absent", "--config-directory", "/nonexistent"])
            #expect(missingConfig.status == 5)
            #expect(missingConfig.output.contains("/nonexistent/absent.json"))
            let badParameter = try await tool(server, ["show", "x", "not-a-pair"])
            #expect(badParameter.status == 64)
            // One call to users/9, three attempts at the dropped connection.
            #expect(server.requests.count == 4)
        }
    }

    @Test func theVerbsUseTheConfiguredStoragesAsCredentialsReportsThem() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/me", .status(.noContent))
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-cli-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let secrets = directory.appendingPathComponent("secrets")
            try FileManager.default.createDirectory(at: secrets, withIntermediateDirectories: true)
            let json = #"{"baseURL": "\#(server.baseURL.absoluteString)/v1", "service": "cli-test", "authentication": {"storages": ["file", "environment"], "optional": ["file"], "file": {"directory": "\#(secrets.path)"}}}"#
            try Data(json.utf8).write(to: directory.appendingPathComponent("test.json"))
            let arguments = ["--env", "test", "--config-directory", directory.path]
            let environment = ["RESOURCEFUL_AUTH_CLI_TEST_TOKEN": "from-env-SECRET"]

            let call = try await Command.run(resourcefulTool, ["show", "me"] + arguments, environment: environment)
            #expect(call.status == 0, "\(call.output)")
            #expect(server.requests.last?.headerFields[.authorization] == "Bearer from-env-SECRET")
            let report = try await Command.run(resourcefulTool, ["credentials"] + arguments, environment: environment)
            #expect(report.status == 0)
            #expect(report.output.contains("environment: a credential for cli-test"))
            #expect(!report.output.contains("SECRET"))

            // A mounted file comes first, for the call and the report alike.
            try Data("from-file-SECRET\n".utf8).write(to: secrets.appendingPathComponent("cli-test"))
            _ = try await Command.run(resourcefulTool, ["show", "me"] + arguments, environment: environment)
            #expect(server.requests.last?.headerFields[.authorization] == "Bearer from-file-SECRET")
            let second = try await Command.run(resourcefulTool, ["credentials"] + arguments, environment: environment)
            #expect(second.output.contains("file (optional): a credential for cli-test"))
        }
    }

    @Test func aRefusedRedirectHasItsOwnExitStatus() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/away", MockResponse(status: .found, headerFields: [.location: "ftp://127.0.0.1/x"]))
            let result = try await tool(server, ["show", "away"])
            #expect(result.status == 8)
            #expect(server.requests.count == 1)
        }
    }

    @Test func verboseLogsAreRedactedAndUseTheStoredCredential() async throws {
        guard ProcessInfo.processInfo.environment["RESOURCEFUL_PRIVATE_KEYRING"] == "1" else {
            Issue.record("run through `make test`, which provides a private keyring")
            return
        }
        try await MockServer.withRunning { server in
            server.stub(.post, "/v1/sessions", .json(raw: #"{"ok":true}"#))
            let account = "cli-\(UUID().uuidString)"
            let login = try await Command.run(
                resourcefulTool, ["login", "--service", "cli-test", "--account", account], input: "cli-SECRET-token\n", keepSessionBus: true
            )
            #expect(login.status == 0)
            let result = try await tool(server, ["create", "sessions", "password=hunter2-SECRET", "--account", account, "--verbose"], keepSessionBus: true)
            #expect(result.status == 0)
            #expect(server.requests.first?.headerFields[.authorization] == "Bearer cli-SECRET-token")
            #expect(result.output.contains("Sending request"))
            #expect(result.output.contains("resourceful.method=POST"))
            #expect(!result.output.contains("cli-SECRET-token"))
            #expect(!result.output.contains("hunter2-SECRET"))
            _ = try await Command.run(resourcefulTool, ["logout", "--service", "cli-test", "--account", account], keepSessionBus: true)
        }
    }

    @Test func recordWritesAMaskedHARAndReplayAnswersFromItWithTheServerGone() async throws {
        let har = FileManager.default.temporaryDirectory.appendingPathComponent("cli-\(UUID().uuidString).har")
        let server = try await MockServer.start()
        server.route(.post, "/v1/users") { request in .json(raw: #"{"id":7,"name":"Ada"}"#, status: .created) }
        server.stub(.get, "/v1/users/7", .json(raw: #"{"id":7,"name":"Ada"}"#))
        let configs = try CLITool.configDirectory(for: server)
        let create = ["create", "users", "name=Ada", "password=hunter2-SECRET", "--env", "test", "--config-directory", configs]
        let show = ["show", "users/7", "--env", "test", "--config-directory", configs]
        let created = try await Command.run(resourcefulTool, create + ["--record", har.path])
        let shown = try await Command.run(resourcefulTool, show + ["--record", har.path])
        try await server.shutdown()
        #expect(created.status == 0)
        #expect(shown.status == 0)
        let text = try String(contentsOf: har, encoding: .utf8)
        #expect(!text.contains("hunter2-SECRET"))
        #expect(text.contains(#""method" : "POST""#) && text.contains(#""method" : "GET""#))

        let replayedShow = try await Command.run(resourcefulTool, show + ["--replay", har.path])
        let replayedCreate = try await Command.run(resourcefulTool, create + ["--replay", har.path])
        #expect(replayedShow.status == 0)
        #expect(replayedShow.output == shown.output)
        #expect(replayedCreate.output == created.output)
        let missing = try await Command.run(resourcefulTool, ["show", "users/8", "--env", "test", "--config-directory", configs, "--replay", har.path])
        #expect(missing.status == 4)
        #expect(missing.output.contains("no recording: GET"))
        #expect(missing.output.contains("/v1/users/8"))
        let both = try await Command.run(resourcefulTool, show + ["--replay", har.path, "--record", har.path])
        #expect(both.status != 0)
        #expect(both.output.contains("not both"))
    }

    @Test func curlPrintsTheRequestMaskedWithoutSendingIt() async throws {
        try await MockServer.withRunning { server in
            let result = try await tool(server, ["create", "users", "name=Ada", "password=hunter2-SECRET", "--curl"])
            #expect(result.status == 0)
            #expect(result.output.hasPrefix("curl --request POST '\(server.baseURL.absoluteString)/v1/users'"))
            #expect(result.output.contains(#""password":"***""#))
            #expect(!result.output.contains("hunter2-SECRET"))
            #expect(server.requests.isEmpty)
        }
    }

    @Test func recordMasksTheConfiguredCredentialField() async throws {
        let har = FileManager.default.temporaryDirectory.appendingPathComponent("cli-\(UUID().uuidString).har")
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/users/7", .json(raw: #"{"id":7,"name":"Ada"}"#))
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-cli-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let json = #"""
                {"baseURL": "\#(server.baseURL.absoluteString)/v1", "service": "cli-test",
                 "authentication": {"storages": ["environment"], "headerName": "X-Upstream-Auth"}}
                """#
            try Data(json.utf8).write(to: directory.appendingPathComponent("test.json"))
            let result = try await Command.run(
                resourcefulTool,
                ["show", "users/7", "--env", "test", "--config-directory", directory.path, "--record", har.path],
                environment: ["RESOURCEFUL_AUTH_CLI_TEST_AUTHORIZATION": "upstream-SECRET-77"]
            )
            #expect(result.status == 0, "\(result.output)")
            #expect(server.requests.first?.headerFields[HTTPField.Name("X-Upstream-Auth")!] == "upstream-SECRET-77")
            let text = try String(contentsOf: har, encoding: .utf8)
            #expect(text.contains("X-Upstream-Auth"))
            #expect(!text.contains("upstream-SECRET-77"))
            #expect(!result.output.contains("upstream-SECRET-77"))
        }
    }
}
