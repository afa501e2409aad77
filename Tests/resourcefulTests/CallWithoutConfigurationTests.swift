import Foundation
import HTTPTypes
import ProcessTestSupport
import ResourcefulTesting
import Testing

/// A call made from flags or the environment alone (`--base-url`, `RESOURCEFUL_BASE_URL`), and a
/// whole URL given as the path, run through the tool's binary against a MockServer.
@Suite struct CallWithoutConfigurationTests {
    /// An empty folder to run the tool in: no `Configs` there.
    static func emptyFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("no-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// The tool run in `directory` with `arguments`, with no configuration folder or base URL
    /// variable besides those `environment` sets.
    static func run(in directory: URL, _ arguments: [String], environment: [String: String] = [:]) async throws -> Command.Result {
        let unset = ["RESOURCEFUL_CONFIG_DIR", "RESOURCEFUL_BASE_URL", "RESOURCEFUL_SERVICE"]
            .filter { environment[$0] == nil }
            .flatMap { ["-u", $0] }
        return try await Command.run(
            "/usr/bin/env", unset + ["/bin/sh", "-c", #"cd "$1" && shift && exec "$@""#, "sh", directory.path, resourcefulTool] + arguments,
            environment: environment
        )
    }

    @Test func aCallWorksFromTheFlagOrTheVariableAlone() async throws {
        let folder = try Self.emptyFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/users/1", .json(raw: #"{"id": 1}"#), .json(raw: #"{"id": 1}"#), .json(raw: #"{"id": 1}"#), .json(raw: #"{"id": 1}"#))
            let base = "\(server.baseURL.absoluteString)/v1"
            let byFlag = try await Self.run(in: folder, ["show", "users/1", "--base-url", base])
            #expect(byFlag.status == 0, "\(byFlag.output)")
            #expect(byFlag.output.contains("\"id\""))
            // The variable alone names the host for a call without a credential.
            let byVariable = try await Self.run(
                in: folder, ["show", "users/1", "--timeout", "5"],
                environment: ["RESOURCEFUL_BASE_URL": base, "RESOURCEFUL_RETRY_MAX_ATTEMPTS": "2"]
            )
            #expect(byVariable.status == 0, "\(byVariable.output)")
            // A credential the command adds goes only to a host the command line names: a
            // variable may be set by something else.
            let typedToVariable = try await Self.run(
                in: folder, ["show", "users/1", "-H", "Authorization: Bearer typed-4"], environment: ["RESOURCEFUL_BASE_URL": base]
            )
            #expect(typedToVariable.status == 5, "\(typedToVariable.output)")
            #expect(typedToVariable.output.contains("RESOURCEFUL_BASE_URL") && typedToVariable.output.contains("--base-url"))
            #expect(!typedToVariable.output.contains("typed-4"))
            let typedToFlag = try await Self.run(in: folder, ["show", "users/1", "-H", "Authorization: Bearer typed-4", "--base-url", base])
            #expect(typedToFlag.status == 0, "\(typedToFlag.output)")
            // The flag wins over the variable.
            let both = try await Self.run(
                in: folder, ["show", "users/1", "--base-url", base], environment: ["RESOURCEFUL_BASE_URL": "http://127.0.0.1:9/v1"]
            )
            #expect(both.status == 0, "\(both.output)")
            #expect(server.requests.map(\.path) == ["/v1/users/1", "/v1/users/1", "/v1/users/1", "/v1/users/1"])
            #expect(server.requests.map { $0.headerFields[.authorization] } == [nil, nil, "Bearer typed-4", nil])
        }
    }

    @Test func neitherAFileNorABaseURLIsAClearError() async throws {
        let folder = try Self.emptyFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try await Self.run(in: folder, ["show", "users/1"])
        #expect(result.status == 5, "\(result.output)")
        #expect(result.output.contains("Configs/development.json"), "\(result.output)")
        #expect(result.output.contains("--base-url") && result.output.contains("RESOURCEFUL_BASE_URL"), "\(result.output)")
        let badFlag = try await Self.run(in: folder, ["show", "users/1", "--base-url", "ftp://example.com"])
        #expect(badFlag.status == 64, "\(badFlag.output)")
        #expect(badFlag.output.contains("--base-url"))
        let badVariable = try await Self.run(in: folder, ["show", "users/1"], environment: ["RESOURCEFUL_BASE_URL": "not a url"])
        #expect(badVariable.status == 5, "\(badVariable.output)")
        #expect(badVariable.output.contains("RESOURCEFUL_BASE_URL"), "\(badVariable.output)")
    }

    @Test func variablesAloneChooseNoStoredCredential() async throws {
        let folder = try Self.emptyFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/me", .json(raw: #"{"ok": true}"#))
            // A folder's environment file (direnv) could set these: they choose no secret.
            let variables = [
                "RESOURCEFUL_BASE_URL": "\(server.baseURL.absoluteString)/v1", "RESOURCEFUL_SERVICE": "victim",
                "RESOURCEFUL_AUTHENTICATION_STORAGES": "environment", "RESOURCEFUL_AUTH_VICTIM_TOKEN": "victim-token-2c9",
            ]
            let result = try await Self.run(in: folder, ["show", "me"], environment: variables)
            #expect(result.status == 5, "\(result.output)")
            #expect(result.output.contains("--account") && result.output.contains("--config-directory"), "\(result.output)")
            #expect(!result.output.contains("victim-token"))
            #expect(server.requests.isEmpty)
        }
    }

    @Test func theFlagWinsOverTheFileAndAnotherOriginInheritsNoCredential() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/v2/me", .json(raw: #"{"ok": true}"#), .json(raw: #"{"ok": true}"#))
            let credentials = #""authentication": {"storages": ["environment"]}, "baseHeaders": ["X-Api-Key: file-key-7"]"#
            let token = ["RESOURCEFUL_AUTH_CLI_TEST_TOKEN": "file-token-3d4"]
            // The file names another host (nothing listens on port 9) and the same one.
            let elsewhere = try CurlStyleOptionsTests.configDirectory("http://127.0.0.1:9/v1", extra: credentials)
            let same = try CurlStyleOptionsTests.configDirectory("\(server.baseURL.absoluteString)/v1", extra: credentials)
            defer {
                try? FileManager.default.removeItem(atPath: elsewhere)
                try? FileManager.default.removeItem(atPath: same)
            }
            let flag = "\(server.baseURL.absoluteString)/v2"
            let other = try await Command.run(
                resourcefulTool, ["show", "me", "--base-url", flag, "--env", "test", "--config-directory", elsewhere], environment: token
            )
            #expect(other.status == 0, "\(other.output)")
            #expect(other.output.contains("not sent there"), "the person is told: \(other.output)")
            #expect(!other.output.contains("file-token") && !other.output.contains("file-key"))
            let sameOrigin = try await Command.run(
                resourcefulTool, ["show", "me", "--base-url", flag, "--env", "test", "--config-directory", same], environment: token
            )
            #expect(sameOrigin.status == 0, "\(sameOrigin.output)")
            #expect(server.requests.map(\.path) == ["/v2/me", "/v2/me"])
            #expect(server.requests.map { $0.headerFields[.authorization] } == [nil, "Bearer file-token-3d4"])
            #expect(server.requests.map { $0.headerFields[HTTPField.Name("X-Api-Key")!] } == [nil, "file-key-7"])
        }
    }

    @Test func aWholeURLIsAcceptedUnderTheBaseURLAndRefusedElsewhere() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/users/1", .json(raw: #"{"id": 1}"#), .json(raw: #"{"id": 1}"#))
            let origin = server.baseURL.absoluteString
            let accepted = try await CurlStyleOptionsTests.tool(server, ["show", "\(origin)/v1/users/1"])
            #expect(accepted.status == 0, "\(accepted.output)")
            #expect(server.requests.map(\.path) == ["/v1/users/1"])

            let refused: [(url: String, named: String)] = [
                ("http://127.0.0.1:9/v1/users/1", "another origin"),
                ("\(origin)/v10/users/1", "/v1"),
                ("\(origin)/v2/users/1", "/v1"),
                ("\(origin)/v1/../admin", "'..'"),
                ("\(origin)/v1/users?id=1", "query"),
                ("ftp://127.0.0.1/v1/users/1", "http or https"),
            ]
            for (url, named) in refused {
                let result = try await CurlStyleOptionsTests.tool(server, ["show", url])
                #expect(result.status == 6, "\(url): \(result.output)")
                #expect(result.output.contains(named), "\(url): \(result.output)")
            }
            let elsewhere = try await CurlStyleOptionsTests.tool(server, ["show", "http://127.0.0.1:9/v1/users/1"])
            #expect(elsewhere.output.contains("http://127.0.0.1:9/v1/users/1") && elsewhere.output.contains("\(origin)/v1"), "both are named: \(elsewhere.output)")
            let userinfo = try await CurlStyleOptionsTests.tool(server, ["show", "http://ada:pw-secret-1@127.0.0.1:9/v1/users/1"])
            #expect(userinfo.status == 6)
            #expect(!userinfo.output.contains("pw-secret"), "\(userinfo.output)")

            // With no base URL at all, the URL's origin is the base.
            let folder = try Self.emptyFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let alone = try await Self.run(in: folder, ["show", "\(origin)/v1/users/1"])
            #expect(alone.status == 0, "\(alone.output)")
            #expect(server.requests.map(\.path) == ["/v1/users/1", "/v1/users/1"])
        }
    }
    @Test func anUnchosenConfigurationsCredentialsStayBehindWhenTheFlagNamesAnotherOrigin() async throws {
        try await MockServer.withRunning { named in
            try await MockServer.withRunning { flagged in
                flagged.stub(.get, "/v1/me", .json(raw: #"{"ok": true}"#))
                let directory = try UnchosenConfigurationTests.workingDirectory(named, authentication: #"{"storages": ["environment"]}"#)
                defer { try? FileManager.default.removeItem(at: directory) }
                let result = try await Self.run(
                    in: directory, ["show", "me", "--env", "x", "--base-url", "\(flagged.baseURL.absoluteString)/v1"],
                    environment: ["RESOURCEFUL_AUTH_CLONED_TOKEN": "victim-token-6e0"]
                )
                #expect(result.status == 0, "\(result.output)")
                #expect(!result.output.contains("victim-token"))
                #expect(flagged.requests.map { $0.headerFields[.authorization] } == [nil])
                #expect(named.requests.isEmpty)
                // The same origin as the file's: the unchosen file has no say, as if there were none.
                named.stub(.get, "/v2/me", .json(raw: #"{"ok": true}"#))
                let same = try await Self.run(
                    in: directory, ["show", "me", "--env", "x", "--base-url", "\(named.baseURL.absoluteString)/v2"],
                    environment: ["RESOURCEFUL_AUTH_CLONED_TOKEN": "victim-token-6e0"]
                )
                #expect(same.status == 0, "\(same.output)")
                #expect(!same.output.contains("victim-token"))
                #expect(named.requests.map { $0.headerFields[.authorization] } == [nil])
            }
        }
    }
    @Test func anAccountNamesTheKeyringItemOfTheBaseURLsHostOnly() async throws {
        guard ProcessInfo.processInfo.environment["RESOURCEFUL_PRIVATE_KEYRING"] == "1" else {
            Issue.record("run through `make test`, which provides a private keyring")
            return
        }
        let folder = try Self.emptyFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/me", .json(raw: #"{"ok": true}"#), .json(raw: #"{"ok": true}"#))
            let account = "no-config-\(UUID().uuidString)"
            let host = try #require(server.baseURL.host)
            for (service, token) in [(host, "host-token-1b8"), ("victim-api", "victim-token-0f3")] {
                let login = try await Command.run(
                    resourcefulTool, ["login", "--service", service, "--account", account], input: "\(token)\n", keepSessionBus: true
                )
                #expect(login.status == 0, "\(login.output)")
            }
            let base = "\(server.baseURL.absoluteString)/v1"
            let named = try await Self.run(in: folder, ["show", "me", "--base-url", base, "--account", account], environment: keyringBus())
            #expect(named.status == 0, "\(named.output)")
            // A variable naming another service does not pick its secret for this host.
            let picked = try await Self.run(
                in: folder, ["show", "me", "--base-url", base, "--account", account],
                environment: keyringBus().merging(["RESOURCEFUL_SERVICE": "victim-api"]) { $1 }
            )
            #expect(picked.status == 0, "\(picked.output)")
            // Nor does a variable naming the host: another port of it may be another user's.
            let hostByVariable = try await Self.run(
                in: folder, ["show", "me", "--account", account], environment: keyringBus().merging(["RESOURCEFUL_BASE_URL": base]) { $1 }
            )
            #expect(hostByVariable.status == 5, "\(hostByVariable.output)")
            #expect(server.requests.map { $0.headerFields[.authorization] } == ["Bearer host-token-1b8", "Bearer host-token-1b8"])
            #expect(!named.output.contains("token-") && !picked.output.contains("token-"))
            for service in [host, "victim-api"] {
                _ = try await Command.run(resourcefulTool, ["logout", "--service", service, "--account", account], keepSessionBus: true)
            }
        }
    }

    /// The session bus of the private keyring, for a run through `run(in:_:environment:)`.
    private func keyringBus() -> [String: String] {
        ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"].map { ["DBUS_SESSION_BUS_ADDRESS": $0] } ?? [:]
    }
}
