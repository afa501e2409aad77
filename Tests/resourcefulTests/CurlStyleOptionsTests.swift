import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

/// What curl and httpie users type: `--version`/`-V`, `-o`, `-v`, `-H`, `--timeout`, `-i`,
/// completion scripts, and the configuration's log level, run through the tool's binary against a
/// MockServer.
@Suite struct CurlStyleOptionsTests {
    /// A config directory whose `test` environment points at `server`'s `/v1`, with `extra` keys
    /// (JSON members, comma-separated) added.
    static func configDirectory(_ baseURL: String, extra: String = "") throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-curl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let json = #"{"baseURL": "\#(baseURL)", "service": "cli-test"\#(extra.isEmpty ? "" : ", " + extra)}"#
        try Data(json.utf8).write(to: directory.appendingPathComponent("test.json"))
        return directory.path
    }

    /// The tool run with `arguments` against `server`'s `test` environment.
    static func tool(_ server: MockServer, _ arguments: [String], extra: String = "", environment: [String: String] = [:]) async throws -> Command.Result {
        let directory = try configDirectory("\(server.baseURL.absoluteString)/v1", extra: extra)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        return try await Command.run(resourcefulTool, arguments + ["--env", "test", "--config-directory", directory], environment: environment)
    }

    @Test func versionIsTheOneTheUserAgentSends() async throws {
        let long = try await Command.run(resourcefulTool, ["--version"])
        let short = try await Command.run(resourcefulTool, ["-V"])
        #expect(long.status == 0 && short.status == 0, "\(long.output) \(short.output)")
        #expect(long.output == "resourceful \(UserAgent.version)\n")
        #expect(short.output == long.output)
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/me", .json(raw: #"{"ok": true}"#))
            let result = try await Self.tool(server, ["show", "me"])
            #expect(result.status == 0, "\(result.output)")
            #expect(server.requests.first?.headerFields[.userAgent] == "Resourceful/\(UserAgent.version)")
        }
    }

    @Test func versionAfterACommandIsRefusedAndNothingIsSent() async throws {
        try await MockServer.withRunning { server in
            server.stub(.delete, "/v1/users/9", .json(raw: "{}"))
            for flag in ["-V", "--version"] {
                let result = try await Self.tool(server, ["delete", "users/9", flag])
                #expect(result.status == 64, "\(result.output)")
                #expect(result.output.contains("\(flag) is an option of resourceful itself, not of 'delete'"), "\(result.output)")
            }
            #expect(server.requests.isEmpty)
        }
    }

    @Test func shortOutputAndVerboseOptions() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/report", .json(raw: #"{"rows": 3}"#))
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("report-\(UUID().uuidString).json")
            defer { try? FileManager.default.removeItem(at: file) }
            let written = try await Self.tool(server, ["show", "report", "-o", file.path])
            #expect(written.status == 0, "\(written.output)")
            #expect(try String(contentsOf: file, encoding: .utf8) == #"{"rows": 3}"#)
            let verbose = try await Self.tool(server, ["show", "report", "-v"])
            #expect(verbose.status == 0, "\(verbose.output)")
            #expect(verbose.output.contains("Sending request") && verbose.output.contains("Received response"), "\(verbose.output)")
        }
    }

    @Test func theConfigurationsLogLevelIsHonoured() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/me", .json(raw: #"{"ok": true}"#))
            let debug = try await Self.tool(server, ["show", "me"], extra: #""logging": {"level": "debug"}"#)
            #expect(debug.status == 0, "\(debug.output)")
            #expect(debug.output.contains("Sending request"), "logging.level debug writes the request log: \(debug.output)")
            let quiet = try await Self.tool(server, ["show", "me"])
            #expect(quiet.status == 0)
            #expect(!quiet.output.contains("Sending request"), "\(quiet.output)")
            let byVariable = try await Self.tool(server, ["show", "me"], environment: ["RESOURCEFUL_LOGGING_LEVEL": "debug"])
            #expect(byVariable.output.contains("Sending request"), "\(byVariable.output)")
        }
    }

    @Test func headersAreSentValidatedAndMasked() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/me", .json(raw: #"{"ok": true}"#), .json(raw: #"{"ok": true}"#))
            let secret = "k-secret-5f2"
            let headers = ["-H", "X-Api-Key: \(secret)", "--header", "X-Trace:  a ", "-H", "x-trace: b", "-H", "User-Agent: mine/1"]
            let sent = try await Self.tool(server, ["show", "me", "-v"] + headers)
            #expect(sent.status == 0, "\(sent.output)")
            let request = try #require(server.requests.first)
            #expect(request.headerFields[HTTPField.Name("X-Api-Key")!] == secret)
            #expect(request.headerFields[HTTPField.Name("X-Trace")!] == "a, b")
            #expect(request.headerFields[.userAgent] == "mine/1")
            #expect(sent.output.contains("X-Api-Key") || sent.output.contains("x-api-key"), "\(sent.output)")
            #expect(!sent.output.contains(secret), "a --header secret reached the log")

            let curl = try await Self.tool(server, ["show", "me", "--curl"] + headers)
            #expect(curl.status == 0, "\(curl.output)")
            #expect(curl.output.lowercased().contains("x-api-key: ***"), "\(curl.output)")
            #expect(!curl.output.contains(secret))

            // Configured credentials lose to the one named on the command line.
            let named = try await Self.tool(
                server, ["show", "me", "-H", "Authorization: Bearer typed-1"],
                extra: #""authentication": {"storages": ["environment"]}"#, environment: ["RESOURCEFUL_AUTH_CLI_TEST_TOKEN": "stored-2"]
            )
            #expect(named.status == 0, "\(named.output)")
            #expect(server.requests.last?.headerFields[.authorization] == "Bearer typed-1")

            let count = server.requests.count
            for bad in ["X-Bad: a\r\nInjected: \(secret)", "X-Bad: \(secret)\nInjected: 1", "no colon \(secret)", "Bad Name: \(secret)", ": \(secret)"] {
                let refused = try await Self.tool(server, ["show", "me", "-H", bad])
                #expect(refused.status == 64, "\(bad.debugDescription): \(refused.output)")
                #expect(refused.output.contains("--header"), "\(refused.output)")
                #expect(!refused.output.contains(secret), "a refused header's value was shown")
            }
            #expect(server.requests.count == count, "a refused header was sent")

            // Fields that frame the body or steer the connection are the transport's.
            for framing in ["Content-Length: 1", "transfer-encoding: chunked", "Connection: close", "Upgrade: h2c", "TE: trailers"] {
                let refused = try await Self.tool(server, ["create", "me", "--data", "{}", "-H", framing])
                #expect(refused.status == 64, "\(framing): \(refused.output)")
                #expect(refused.output.contains("set by the transport"), "\(refused.output)")
            }
            #expect(server.requests.count == count, "a framing field was sent")
        }
    }

    /// `--timeout`, or curl's name for it, `--max-time`.
    @Test(arguments: ["--timeout", "--max-time"])
    func timeoutIsTheCallsDeadline(flag: String) async throws {
        try await MockServer.withRunning { server in
            // Far past the limit: a process started on a loaded machine still ends well before it.
            let delay = Duration.seconds(60)
            server.stub(.get, "/v1/slow", MockResponse(status: .ok, body: Data("{}".utf8), delay: delay))
            let result = try await Self.tool(server, ["show", "slow", flag, "0.5"])
            #expect(result.status == 4, "\(result.output)")
            #expect(result.duration < delay / 2, "the call outlived \(flag): \(result.duration)")
            for bad in ["0", "-1", "nan", "1e300", "soon"] {
                let refused = try await Self.tool(server, ["show", "slow", flag, bad])
                #expect(refused.status == 64, "\(bad): \(refused.output)")
            }
        }
    }

    @Test func includePrintsTheStatusLineAndMaskedHeadersBeforeTheBody() async throws {
        try await MockServer.withRunning { server in
            var response = MockResponse.json(raw: #"{"id": 1}"#, status: .created)
            response.headerFields[.setCookie] = "session=cookie-secret-9a1"
            response.headerFields[HTTPField.Name("X-Request-Id")!] = "req-77"
            server.stub(.post, "/v1/users", response)
            for flag in ["-i", "--include"] {
                let result = try await Self.tool(server, ["create", "users", "name=Ada", flag])
                #expect(result.status == 0, "\(result.output)")
                #expect(result.output.hasPrefix("HTTP/1.1 201 Created\n"), "\(result.output)")
                let head = (result.output.components(separatedBy: "\n\n").first ?? "").lowercased()
                #expect(head.contains("\nx-request-id: req-77\n"), "\(result.output)")
                #expect(head.contains("\nset-cookie: ***\n"), "\(result.output)")
                #expect(!result.output.contains("cookie-secret"))
                let body = result.output.range(of: "\n\n").map { String(result.output[$0.upperBound...]) } ?? ""
                #expect(body.contains("\"id\""), "the body follows the head: \(result.output)")
            }
            server.stub(.get, "/v1/users/9", .json(raw: #"{"message": "no such user"}"#, status: .notFound))
            let missing = try await Self.tool(server, ["show", "users/9", "-i"])
            #expect(missing.status == 1, "\(missing.output)")
            #expect(missing.output.hasPrefix("HTTP/1.1 404 Not Found\n"), "the head of an error answer is printed too: \(missing.output)")
            let curl = try await Self.tool(server, ["show", "users", "--curl", "-i"])
            #expect(curl.status == 64)
        }
    }

    @Test func completionScripts() async throws {
        for shell in ["bash", "zsh", "fish"] {
            let result = try await Command.run(resourcefulTool, ["completion", shell])
            #expect(result.status == 0, "\(shell): \(result.output)")
            #expect(result.output.contains("resourceful") && result.output.contains("--header"), "\(shell)")
        }
        let unknown = try await Command.run(resourcefulTool, ["completion", "tcsh"])
        #expect(unknown.status == 64)
        #expect(unknown.output.contains("bash, zsh or fish"), "\(unknown.output)")
    }
}
