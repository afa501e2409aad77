import Foundation
import HTTPTypes
import ProcessTestSupport
import ResourcefulTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What the verbs print, run through the built tool as a person runs it: to a pipe, and on a
/// terminal (under script(1), whose pseudo-terminal is the tool's standard output and error).
@Suite struct CallOutputTests {
    private func tool(_ server: MockServer, _ arguments: [String], environment: [String: String] = [:]) async throws -> Command.Result {
        try await Command.run(
            resourcefulTool, arguments + ["--env", "test", "--config-directory", try CLITool.configDirectory(for: server)], environment: environment
        )
    }

    /// The tool run on a terminal; its output with the terminal's CR LF line ends as LF.
    private func onTerminal(_ server: MockServer, _ arguments: [String], environment: [String: String] = [:]) async throws -> Command.Result {
        let full = [resourcefulTool] + arguments + ["--env", "test", "--config-directory", try CLITool.configDirectory(for: server)]
        let command = full.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        var result = try await Command.run("/usr/bin/script", ["-qec", command, "/dev/null"], environment: environment)
        result.output = result.output.replacingOccurrences(of: "\r\n", with: "\n")
        return result
    }

    private static func response(_ body: Data, type: String, status: HTTPResponse.Status = .ok) -> MockResponse {
        MockResponse(status: status, headerFields: [.contentType: type], body: body)
    }

    @Test func jsonKeepsTheServersOrderAndExactNumbers() async throws {
        try await MockServer.withRunning { server in
            let body = #"{"name":"Ada","id":12345678901234567890123,"ratio":1.10,"tiny":1e-400,"tags":[],"nested":{"z":null,"a":true}}"#
            server.stub(.get, "/v1/users/1", .json(raw: body))
            let result = try await tool(server, ["show", "users/1"])
            #expect(result.status == 0, "\(result.output)")
            #expect(
                result.output
                    == "{\n  \"name\": \"Ada\",\n  \"id\": 12345678901234567890123,\n  \"ratio\": 1.10,\n  \"tiny\": 1e-400,\n  \"tags\": [],\n  \"nested\": {\n    \"z\": null,\n    \"a\": true\n  }\n}\n"
            )
        }
    }

    @Test func aNonJSONAnswerIsPrintedAsItIs() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/page", Self.response(Data("<html><body>hi</body></html>".utf8), type: "text/html; charset=utf-8"))
            // Bytes a pipe receives unchanged, a NUL among them.
            server.stub(.get, "/v1/blob", Self.response(Data([0, 1, 2, 0x41, 0x0A]), type: "application/octet-stream"))
            // Labelled JSON, but not JSON: shown as it is, not refused.
            server.stub(.get, "/v1/broken", Self.response(Data("{not json".utf8), type: "application/json"))
            let page = try await tool(server, ["show", "page"])
            #expect(page.status == 0, "\(page.output)")
            #expect(page.output == "<html><body>hi</body></html>")
            let blob = try await tool(server, ["show", "blob"])
            #expect(blob.status == 0)
            #expect(Array(blob.output.utf8) == [0, 1, 2, 0x41, 0x0A])
            let broken = try await tool(server, ["show", "broken"])
            #expect(broken.status == 0)
            #expect(broken.output == "{not json")
        }
    }

    @Test func onATerminalBinaryIsRefusedTextEscapedAndJSONColoured() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/blob", Self.response(Data([0x89, 0x50, 0x4E, 0x47, 0, 0, 0x1B]), type: "image/png"))
            server.stub(.get, "/v1/text", Self.response(Data("title\u{1B}]0;owned\u{07}\u{1B}[2J end".utf8), type: "text/plain"))
            server.stub(.get, "/v1/json", .json(raw: #"{"a":"\u001b[31m","b":1}"#))
            let blob = try await onTerminal(server, ["show", "blob"])
            #expect(blob.status == 9, "\(blob.output)")
            #expect(blob.output.contains("binary output can mess up your terminal"))
            #expect(blob.output.contains("7 bytes of image/png"))
            #expect(blob.output.contains("--output"))
            #expect(!blob.output.contains("\u{1B}"))

            let text = try await onTerminal(server, ["show", "text"])
            #expect(text.status == 0)
            #expect(text.output == "title\\x1b]0;owned\\x07\\x1b[2J end\n")

            let coloured = try await onTerminal(server, ["show", "json"], environment: ["TERM": "xterm", "NO_COLOR": ""])
            #expect(coloured.status == 0)
            #expect(coloured.output.contains("\u{1B}[34;1m\"a\"\u{1B}[0m: \u{1B}[32m\"\\u001b[31m\"\u{1B}[0m"))
            let plain = try await onTerminal(server, ["show", "json"], environment: ["TERM": "xterm", "NO_COLOR": "1"])
            #expect(plain.output == "{\n  \"a\": \"\\u001b[31m\",\n  \"b\": 1\n}\n")
        }
    }

    @Test func aNonJSONErrorBodyIsShownBoundedAndEscaped() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/missing", Self.response(Data("<h1>Not here</h1>\u{1B}[2J".utf8), type: "text/html", status: .notFound))
            let long = String(repeating: "x", count: 100_000)
            server.stub(.get, "/v1/long", Self.response(Data(long.utf8), type: "text/plain", status: .internalServerError))
            server.stub(.get, "/v1/secret", Self.response(Data("nope".utf8), type: "text/plain", status: .unauthorized))
            let missing = try await tool(server, ["show", "missing"])
            #expect(missing.status == 1)
            #expect(missing.output == "resourceful: GET /missing: the server answered 404 Not Found\n<h1>Not here</h1>\\x1b[2J\n")
            let cut = try await tool(server, ["show", "long"])
            #expect(cut.status == 1)
            #expect(cut.output.count < 9 * 1024)
            #expect(cut.output.contains("more bytes not shown"))
            // A 401 is an answer outside 200–299 like any other: exit 1, its body shown.
            let unauthorized = try await tool(server, ["show", "secret"])
            #expect(unauthorized.status == 1, "\(unauthorized.output)")
            #expect(unauthorized.output.contains("401 Unauthorized"))
            #expect(unauthorized.output.contains("\nnope\n"))
        }
    }

    @Test func anUnreachableHostIsOnePlainLine() async throws {
        let (descriptor, port) = try LoopbackSocket.bound(listening: nil)
        defer { close(descriptor) }
        let folder = try Self.configFolder(#"{"baseURL": "http://127.0.0.1:\#(port)", "service": "cli-test", "http": {"connectRetryBudget": 0.2}}"#)
        let result = try await Command.run(resourcefulTool, ["show", "users/1", "--env", "test", "--config-directory", folder])
        #expect(result.status == 4, "\(result.output)")
        let lines = result.output.split(separator: "\n")
        #expect(lines.count == 1, "\(result.output)")
        #expect(result.output.hasPrefix("resourceful: GET /users/1: the connection to 127.0.0.1:\(port) was refused"), "\(result.output)")
        #expect(result.output.components(separatedBy: "was refused").count == 2, "\(result.output)")
        #expect(!result.output.contains("APIError"))
        // The kinds and the error underneath are for --verbose.
        let verbose = try await Command.run(resourcefulTool, ["show", "users/1", "--verbose", "--env", "test", "--config-directory", folder])
        #expect(verbose.output.contains("APIError.transport"))
    }

    @Test func configurationAndFileProblemsSayWhatToFix() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/users/1", .json(raw: "{}"))
            let missing = try await Command.run(resourcefulTool, ["show", "x", "--env", "absent", "--config-directory", "/nonexistent"])
            #expect(missing.status == 5)
            #expect(missing.output.contains("/nonexistent/absent.json"))
            #expect(!missing.output.contains("APIError"), "\(missing.output)")

            // Under a folder that does not exist (made by nothing here, whoever runs the tests).
            let absent = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-absent-\(UUID().uuidString)").path
            let har = try await tool(server, ["show", "users/1", "--replay", absent + "/calls.har"])
            #expect(har.status == 9, "\(har.output)")
            #expect(har.output.contains(absent + "/calls.har"))
            #expect(har.output.contains("No such file or directory") || har.output.contains("does not exist"), "\(har.output)")
            #expect(!har.output.contains("could not be completed"))
            // Not a HAR file: said without the decoder's type names.
            let notHAR = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-\(UUID().uuidString).har")
            try Data([0, 1, 2]).write(to: notHAR)
            defer { try? FileManager.default.removeItem(at: notHAR) }
            let garbage = try await tool(server, ["show", "users/1", "--replay", notHAR.path])
            #expect(garbage.status == 9, "\(garbage.output)")
            #expect(garbage.output.contains("is not a HAR file"))
            #expect(!garbage.output.contains("DecodingError"), "\(garbage.output)")

            let output = try await tool(server, ["show", "users/1", "--output", absent + "/dir/x"])
            #expect(output.status == 9, "\(output.output)")
            #expect(output.output.contains(absent + "/dir"))
            #expect(!output.output.contains("APIError"))
        }
    }

    @Test(arguments: [["credentials"], ["status", "--service", "cli-test", "--account", "me"], ["login", "--service", "cli-test", "--account", "me"]])
    func aBrokenConfigurationExitsWithFiveForEveryCommand(command: [String]) async throws {
        // The oauth2 storage without its client ID.
        let folder = try Self.configFolder(
            #"{"baseURL": "http://127.0.0.1:1", "service": "cli-test", "authentication": {"storages": ["oauth2"], "oauth2": {"tokenEndpoint": "http://127.0.0.1:1/token"}}}"#
        )
        let result = try await Command.run(resourcefulTool, command + ["--env", "test", "--config-directory", folder], input: "token\n")
        #expect(result.status == 5, "\(result.output)")
        #expect(!result.output.contains("APIError"), "\(result.output)")
    }

    @Test func parametersKeepTheirDigits() async throws {
        try await MockServer.withRunning { server in
            let query = try await tool(server, ["index", "users", "n:=12345678901234567890123", "d:=0.1", "--curl"])
            #expect(query.output.contains("?n=12345678901234567890123&d=0.1") || query.output.contains("?d=0.1&n=12345678901234567890123"), "\(query.output)")
            let body = try await tool(server, ["create", "users", "n:=12345678901234567890123", "--curl"])
            #expect(body.output.contains(#"{"n":12345678901234567890123}"#), "\(body.output)")
        }
    }

    @Test func theHelpHoldsTheExitStatusTable() async throws {
        let help = try await Command.run(resourcefulTool, ["--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("Exit status, for every command:"))
        #expect(help.output.contains("  5   the configuration cannot be loaded"))
        #expect(help.output.contains("  9   a local file cannot be read or written"))
    }

    private static func configFolder(_ json: String) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(json.utf8).write(to: directory.appendingPathComponent("test.json"))
        return directory.path
    }
}
