import Foundation
import ProcessTestSupport
import Testing

/// A misspelt key or a file that is not standard JSON stops the tool before any request, with
/// the configuration's exit status and one line naming the key, the file and what was meant.
@Suite struct ConfigurationMistakesCommandTests {
    /// `resourceful show users` with `json` as the `x` environment of a scratch folder.
    static func show(_ json: String) async throws -> (Command.Result, file: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-mistakes-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("x.json")
        try Data(json.utf8).write(to: file)
        let result = try await Command.run(resourcefulTool, ["show", "users", "--config-directory", directory.path, "--env", "x"])
        return (result, file.path)
    }

    @Test(arguments: [
        (#"{"baseURL": "http://127.0.0.1:9/v1", "service": "s", "timout": 1}"#, "'timout'", "did you mean 'timeout'?"),
        (
            #"{"baseURL": "http://127.0.0.1:9/v1", "service": "s", "retry": {"maxAttemps": 5}}"#, "'retry.maxAttemps'",
            "did you mean 'retry.maxAttempts'?"
        ),
        (#"{"baseUrl": "http://127.0.0.1:9/v1", "service": "s"}"#, "'baseUrl'", "did you mean 'baseURL'?"),
        ("{\"baseURL\": \"http://127.0.0.1:9/v1\",\n \"service\": \"s\",\n}", "not standard JSON", "line 3, column 1"),
    ])
    func aConfigurationMistakeExitsFiveNamingTheKeyTheFileAndTheSuggestion(json: String, names: String, says: String) async throws {
        let (result, file) = try await Self.show(json)
        #expect(result.status == 5, "\(result.output)")
        #expect(result.output.contains(names) && result.output.contains(says), "\(result.output)")
        #expect(result.output.contains(file), "\(result.output)")
    }

    /// `login`, `status` and `logout` of an OAuth 2 service whose configuration has a mistake stop
    /// as a call does, naming it: never taken for a keyring service ("--account is needed"), never
    /// sent to the keyring.
    @Test(arguments: ["login", "status", "logout"])
    func anOAuthCommandStopsAtAConfigurationMistakeAsACallDoes(command: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-mistakes-oauth-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let json = #"{"baseURL": "http://127.0.0.1:9/v1", "service": "t", "timout": 1, "authentication": {"storages": ["oauth2"], "#
            + #""oauth2": {"tokenEndpoint": "http://127.0.0.1:9/token", "clientID": "c"}}}"#
        try Data(json.utf8).write(to: directory.appendingPathComponent("oa.json"))
        for account in [[], ["--account", "a"]] {
            let result = try await Command.run(
                resourcefulTool, [command, "--service", "t", "--env", "oa", "--config-directory", directory.path] + account)
            #expect(result.status == 5, "\(result.output)")
            #expect(result.output.contains("did you mean 'timeout'?"), "\(result.output)")
            #expect(!result.output.contains("--account is needed") && !result.output.contains("keyring"), "\(result.output)")
        }
        // A configuration named on the command line that is not there is said so.
        let missing = try await Command.run(resourcefulTool, [command, "--service", "t", "--env", "nope", "--config-directory", directory.path])
        #expect(missing.status == 5 && missing.output.contains("nope.json does not exist"), "\(missing.output)")
    }

    /// A configuration shared with an app of a fleet names its store (`sharedState.kind`), which
    /// the tool neither links nor needs: the call goes on, and the person is told once.
    @Test func aSharedStateTheToolDoesNotUseIsSaid() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-shared-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let json = #"{"baseURL": "http://127.0.0.1:9/v1", "service": "t", "sharedState": {"kind": "postgres", "postgres": {"host": "127.0.0.1"}}"#
        try Data((json + "}").utf8).write(to: directory.appendingPathComponent("x.json"))
        let oauth = #", "authentication": {"storages": ["oauth2"], "oauth2": {"tokenEndpoint": "http://127.0.0.1:9/token", "clientId": "c"}}}"#
        try Data((json + oauth).utf8).write(to: directory.appendingPathComponent("o.json"))
        let said = "the configuration's sharedState (kind 'postgres') is not used"
        let call = try await Command.run(resourcefulTool, ["show", "users", "--curl", "--config-directory", directory.path, "--env", "x"])
        #expect(call.status == 0, "\(call.output)")
        #expect(call.output.contains(said) && call.output.contains("curl 'http://127.0.0.1:9/v1/users'"), "\(call.output)")
        #expect(call.output.components(separatedBy: said).count == 2, "\(call.output)")
        let status = try await Command.run(resourcefulTool, ["status", "--service", "t", "--config-directory", directory.path, "--env", "o"])
        #expect(status.output.contains(said), "\(status.output)")
    }
}
