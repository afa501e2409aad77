import Foundation
import InMemoryLogging
import Logging
import Resourceful
import ResourcefulTesting
import Testing

/// The mistakes a person makes writing a configuration by hand (a misspelt key, a trailing
/// comma, a comment) are errors naming the key or the place, the file, and what was likely
/// meant; none runs silently with a default.
@Suite struct ConfigurationMistakesTests {
    /// Loads `json` as `mistakes.json` of a scratch folder.
    static func load(_ json: String, environment: [String: String] = [:], service: String? = nil) async throws(APIError) -> APIConfig {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-mistakes-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try? Data(json.utf8).write(to: directory.appendingPathComponent("mistakes.json"))
        return try await APIConfig.load(
            environment: "mistakes", configDirectory: directory.path, environmentVariables: environment, service: service)
    }

    static let base = #""baseURL": "https://api.example.com/v1", "service": "s""#

    static let unknownKeys: [(json: String, key: String, suggestion: String?)] = [
        (#"{\#(base), "timout": 1}"#, "timout", "timeout"),
        (#"{\#(base), "retry": {"maxAttemps": 5}}"#, "retry.maxAttemps", "retry.maxAttempts"),
        (#"{\#(base), "retry.maxAttemps": 5}"#, "retry.maxAttemps", "retry.maxAttempts"),
        (#"{"baseUrl": "https://api.example.com/v1", "service": "s"}"#, "baseUrl", "baseURL"),
        (
            #"{\#(base), "services": {"billing": {"baseURL": "https://b.example.com", "service": "b", "timout": 2}}}"#,
            "services.billing.timout", "services.billing.timeout"
        ),
        (#"{\#(base), "http": {"tls": {"caFil": "/etc/ca.pem"}}}"#, "http.tls.caFil", "http.tls.caFile"),
        (#"{\#(base), "loging": {"level": "info"}}"#, "loging", "logging"),
        (#"{\#(base), "colour": "red"}"#, "colour", nil),
        (#"{\#(base), "timeout": 5, "retry": {"maxAttempts": 2, "jitter": true}}"#, "retry.jitter", nil),
        (#"{\#(base), "authentication": {"storage": ["file"]}}"#, "authentication.storage", "authentication.storages"),
        (#"{\#(base), "authentication": {"keyrng": {"account": "ada"}}}"#, "authentication.keyrng", "authentication.keyring"),
        (
            #"{\#(base), "authentication": {"oauth2": {"clientID": "cli"}}}"#, "authentication.oauth2.clientID",
            "authentication.oauth2.clientId"
        ),
        (
            #"{\#(base), "authentication": {"keyring": {"acount": "ada"}}}"#, "authentication.keyring.acount",
            "authentication.keyring.account"
        ),
    ]

    @Test(arguments: unknownKeys)
    func anUnknownKeyInTheFileIsAnErrorNamingItTheFileAndTheNearestKey(json: String, key: String, suggestion: String?) async throws {
        let error = await expectConfigError { _ = try await Self.load(json) }
        #expect(error?.kind == .unknownKey)
        #expect(error?.key == key)
        #expect(error?.suggestion == suggestion)
        #expect(error?.source.hasSuffix("mistakes.json") == true)
        let description = error?.description ?? ""
        #expect(
            description.contains("'\(key)'") && description.contains("mistakes.json") && description.contains("line 1"), "\(description)")
        if let suggestion {
            #expect(description.contains("did you mean '\(suggestion)'?"), "\(description)")
        } else {
            #expect(!description.contains("did you mean"), "\(description)")
        }
    }

    @Test func theLineOfAnUnknownKeyIsNamed() async throws {
        let error = await expectConfigError {
            _ = try await Self.load(
                "{\n  \"baseURL\": \"https://api.example.com\",\n  \"service\": \"s\",\n  \"retry\": {\n    \"maxAttemps\": 5\n  }\n}\n")
        }
        #expect(error?.line == 5 && error?.column == 5)
        #expect(error?.description.contains("(line 5, column 5)") == true, "\(error?.description ?? "")")
    }

    @Test func aSectionOrAServiceThatIsNotAnObjectIsAnError() async throws {
        for (json, key) in [
            (#"{\#(Self.base), "retry": 5}"#, "retry"),
            (#"{\#(Self.base), "services": {"billing": "b"}}"#, "services.billing"),
            (#"{\#(Self.base), "services": []}"#, "services"),
            (#"{\#(Self.base), "timeout": {"seconds": 5}}"#, "timeout"),
        ] {
            let error = await expectConfigError { _ = try await Self.load(json) }
            #expect(error?.kind == .wrongType && error?.key == key, "\(json): \(String(describing: error))")
        }
    }

    @Test func aKeySetTwiceByDottedAndNestedFormsIsAnError() async throws {
        let error = await expectConfigError {
            _ = try await Self.load(#"{\#(Self.base), "http": {"maxRedirects": 2}, "http.maxRedirects": 9}"#)
        }
        #expect(error?.key == "http.maxRedirects")
    }

    @Test func theKeysOfAStorageKindAnAppBringsAreLeftToItsFactory() async throws {
        let config = try await Self.load(
            #"{\#(Self.base), "authentication": {"storages": ["vault"], "vault": {"address": "https://vault.internal", "role": "api"}}}"#,
            environment: ["RESOURCEFUL_AUTHENTICATION_VAULT_ROLE": "other"]
        )
        #expect(config.authentication.storages == ["vault"])
    }

    // MARK: - Environment variables

    static let unknownVariables: [(variable: String, suggestion: String?)] = [
        ("RESOURCEFUL_TIMOUT", "RESOURCEFUL_TIMEOUT"),
        ("RESOURCEFUL_RETRY_MAX_ATTEMPS", "RESOURCEFUL_RETRY_MAX_ATTEMPTS"),
        ("RESOURCEFUL_HTTP_PROXI", "RESOURCEFUL_HTTP_PROXY"),
        ("RESOURCEFUL_LOGGING_COLOUR", nil),
        ("RESOURCEFUL_SERVICES_BILLING_TIMOUT", "RESOURCEFUL_SERVICES_BILLING_TIMEOUT"),
        ("RESOURCEFUL_AUTHENTICATION_OAUTH2_CLIENTID", "RESOURCEFUL_AUTHENTICATION_OAUTH2_CLIENT_ID"),
        ("RESOURCEFUL_AUTHENTICATION_OAUTH2_COLOUR", nil),
        ("RESOURCEFUL_AUTHENTICATION_STORAGE", "RESOURCEFUL_AUTHENTICATION_STORAGES"),
    ]

    @Test(arguments: unknownVariables)
    func aVariableMeantForAnUnknownKeyIsAnError(variable: String, suggestion: String?) async throws {
        let json = #"{\#(Self.base), "services": {"billing": {"baseURL": "https://b.example.com", "service": "b"}}}"#
        let error = await expectConfigError { _ = try await Self.load(json, environment: [variable: "secret-value-1f3"]) }
        #expect(error?.kind == .unknownKey && error?.key == variable && error?.source == variable)
        #expect(error?.suggestion == suggestion)
        let description = error?.description ?? ""
        #expect(description.contains(variable) && !description.contains("secret-value"), "\(description)")
        if let suggestion { #expect(description.contains("did you mean \(suggestion)?"), "\(description)") }
    }

    @Test func aVariableMeantForAnUnknownKeyIsAnErrorWithoutAFileToo() async throws {
        let variables = [
            "RESOURCEFUL_BASE_URL": "https://api.example.com/v1", "RESOURCEFUL_SERVICE": "s", "RESOURCEFUL_RETRY_MAX_ATTEMPS": "3",
        ]
        let error = await expectConfigError { _ = try APIConfig.load(environmentVariablesOnly: variables) }
        #expect(error?.kind == .unknownKey && error?.suggestion == "RESOURCEFUL_RETRY_MAX_ATTEMPTS")
        var fixed = variables
        fixed["RESOURCEFUL_RETRY_MAX_ATTEMPS"] = nil
        fixed["RESOURCEFUL_RETRY_MAX_ATTEMPTS"] = "3"
        #expect(try APIConfig.load(environmentVariablesOnly: fixed).retry.maxAttempts == 3)
    }

    @Test func thePackagesOtherVariablesAndUnrelatedOnesAreLetThrough() async throws {
        let json = #"{\#(Self.base), "services": {"billing": {"baseURL": "https://b.example.com", "service": "b"}}}"#
        let config = try await Self.load(
            json,
            environment: [
                "RESOURCEFUL_CONFIG_DIR": "/etc/resourceful",
                "RESOURCEFUL_AUTH_S_TOKEN": "t",
                "RESOURCEFUL_AUTH": "x",
                "RESOURCEFUL_PRIVATE_KEYRING": "1",
                "RESOURCEFUL_ENV": "production",
                "RESOURCEFUL_SERVICES_OTHER_TIMEOUT": "3",
                "RESOURCEFUL_TIMEOUT": "7",
                "RESOURCEFUL_SERVICES_BILLING_RETRY_MAX_ATTEMPTS": "2",
                "RESOURCEFUL_AUTHENTICATION_KEYRING_ACCOUNT": "ada",
                "RESOURCEFUL_AUTHENTICATION_ENVIRONMENT_PREFIX": "RESOURCEFUL_HTTP_CREDENTIALS",
                "RESOURCEFUL_HTTP_CREDENTIALS_B_TOKEN": "t",
            ], service: "billing")
        #expect(config.timeout == .seconds(7))
        #expect(config.retry.maxAttempts == 2)
    }

    @Test func servicesWhoseNamesShareABeginningKeepTheirOwnVariables() async throws {
        let json = #"{\#(Self.base), "services": {"a": {"service": "a"}, "a_b": {"service": "ab"}}, "services.c.service": "c"}"#
        let config = try await Self.load(json, environment: ["RESOURCEFUL_SERVICES_A_B_TIMEOUT": "4"], service: "a_b")
        #expect(config.timeout == .seconds(4) && config.service == "ab")
        // A service described by a dotted key is described.
        #expect(try await Self.load(json, service: "c").service == "c")
        let error = await expectConfigError {
            _ = try await Self.load(json, environment: ["RESOURCEFUL_SERVICES_A_B_TIMOUT": "4"], service: "a_b")
        }
        #expect(error?.suggestion == "RESOURCEFUL_SERVICES_A_B_TIMEOUT")
    }

    @Test func aKeysNameIsShownShortenedAndWithoutItsControlCharacters() async throws {
        let long = String(repeating: "k", count: 100_000)
        for (json, shown) in [
            (#"{\#(Self.base), "\u001b[2Jtimout": 1}"#, #"\u{1b}[2Jtimout"#),
            (#"{\#(Self.base), "\#(long)": 1}"#, String(repeating: "k", count: 64) + "…"),
            (#"{\#(Self.base), "a": 1, "\u001b": 2, "\u001b": 3}"#, #"\u{1b}"#),
        ] {
            let error = await expectConfigError { _ = try await Self.load(json) }
            let description = error?.description ?? ""
            #expect(description.contains(shown) && !description.contains("\u{1B}") && description.count < 400, "\(description.prefix(400))")
        }
    }

    @Test func aVariablesNameIsShownWithoutItsControlCharacters() async throws {
        let error = await expectConfigError {
            _ = try await Self.load(#"{\#(Self.base)}"#, environment: ["RESOURCEFUL_RETRY_\u{1B}[31mX": "1"])
        }
        #expect(error?.description.contains("\u{1B}") == false && error?.description.contains("RESOURCEFUL_RETRY_") == true)
    }

    // MARK: - Other modules' keys

    struct NamedFactory: AuthenticationStorageFactory {
        let kind: APIConfig.StorageKind
        func makeStorage(_ context: AuthenticationStorageContext) async throws(APIError) -> any AuthenticationStorage {
            InMemoryAuthenticationStorage()
        }
    }

    /// The warnings `makeStorage` logs for `config` with `factories`.
    static func warnings(_ config: APIConfig, factories: [any AuthenticationStorageFactory]) async throws -> [String] {
        let logs = InMemoryLogHandler()
        let logger = Logger(label: "mistakes") { _ in logs }
        _ = try await config.authentication.makeStorage(
            config: config, factories: factories, logger: logger, environment: [:],
            transport: StubTransport { _ in throw CancellationError() }
        )
        return logs.entries.filter { $0.level == .warning }.map { "\($0.message) \($0.metadata)" }
    }

    @Test func theKeysOfAModuleTheProgramDoesNotLinkAreAWarningOnce() async throws {
        let json = #"""
            {\#(Self.base), "authentication": {"storages": ["environment", "keyring"], "optional": ["keyring"],
              "keyring": {"account": "ada", "scheme": "Bearer"},
              "oauth2": {"issuer": "https://auth.example.com", "clientId": "cli"}},
             "services": {"crm": {"baseURL": "https://crm.example.com", "service": "crm", "authentication": {"oauth2": {"clientId": "crm"}}}}}
            """#
        let config = try await Self.load(json)
        let unlinked = try await Self.warnings(config, factories: [])
        #expect(unlinked.count == 2, "\(unlinked)")
        #expect(unlinked.contains { $0.contains("ResourcefulKeyring") && $0.contains("authentication.keyring") })
        #expect(unlinked.contains { $0.contains("ResourcefulOAuth2") && $0.contains("authentication.oauth2") })
        let linked = try await Self.warnings(config, factories: [NamedFactory(kind: "keyring"), NamedFactory(kind: "oauth2")])
        #expect(linked.isEmpty, "\(linked)")
        // Once: a second API made from the same file is not warned again.
        let again = try await Self.warnings(config, factories: [])
        #expect(again.isEmpty, "\(again)")
    }

    @Test func aModulesKeySetByItsVariableIsAWarningToo() async throws {
        // Set for a service of its own, so that no other test's warning stands for this one.
        let service = "svc\(UInt32.random(in: 0...UInt32.max))"
        let variable = "RESOURCEFUL_SERVICES_\(service.uppercased())_AUTHENTICATION_KEYRING_ACCOUNT"
        let json = #"{\#(Self.base), "services": {"\#(service)": {"service": "other"}}}"#
        let config = try await Self.load(json, environment: [variable: "ada"], service: service)
        let warnings = try await Self.warnings(config, factories: [])
        #expect(warnings.count == 1 && warnings.first?.contains(variable) == true, "\(warnings)")
    }

    // MARK: - Standard JSON

    static let nonStandard: [(json: String, line: Int, column: Int, says: String)] = [
        ("{\n  \"baseURL\": \"https://api.example.com\",\n  \"service\": \"s\",\n}", 4, 1, "trailing comma"),
        (
            "{\"baseURL\": \"https://api.example.com\", \"service\": \"s\", \"logging\": {\"maskedHeaders\": [\"X-A\",]}}", 1, 92,
            "trailing comma"
        ),
        ("{\n  // the API\n  \"baseURL\": \"https://api.example.com\", \"service\": \"s\"}", 2, 3, "comment"),
        ("{\"baseURL\": \"https://api.example.com\", /* x */ \"service\": \"s\"}", 1, 40, "comment"),
        ("{\"baseURL\": \"https://api.example.com\", \"service\": \"s\"} # end", 1, 56, "comment"),
        ("{\"baseURL\": \"https://api.example.com\", \"service\": \"s\", \"timeout\": NaN}", 1, 67, "NaN"),
        ("{\"baseURL\": \"https://api.example.com\", \"service\": \"s\", \"timeout\": Infinity}", 1, 67, "Infinity"),
        ("{\"baseURL\": \"https://api.example.com\", \"service\": \"s\", \"timeout\": -Infinity}", 1, 68, "Infinity"),
        ("{\"baseURL\": 'https://api.example.com', \"service\": \"s\"}", 1, 13, "single quotes"),
        ("{'baseURL': \"https://api.example.com\", \"service\": \"s\"}", 1, 2, "single quotes"),
        ("{\"baseURL\": \"https://api.example.com\",\n \"service\": \"s\",\n \"service\": \"t\"}", 3, 2, "twice"),
        (
            "{\"baseURL\": \"https://api.example.com\", \"service\": \"s\", \"http\": {\"maxRedirects\": 1, \"maxRedirects\": 2}}", 1, 84,
            "twice"
        ),
        ("{\"baseURL\": \"https://api.example.com\", \"service\": \"s\", \"timeout\": 05}", 1, 68, "leading zero"),
        ("{\"baseURL\": \"https://api.example.com\", \"service\": \"s\", \"timeout\": +5}", 1, 67, "leading +"),
        ("{baseURL: \"https://api.example.com\", \"service\": \"s\"}", 1, 2, "double quotes"),
        ("\u{FEFF}{\"baseURL\": \"https://api.example.com\", \"service\": \"s\"}", 1, 1, "byte order mark"),
        ("{\"baseURL\": \"https://api.example.com\t\", \"service\": \"s\"}", 1, 37, "control character"),
        ("{\"baseURL\": \"https://api.example.com\", \"service\": \"\\x41\"}", 1, 53, "escape"),
        ("{\"baseURL\": \"https://api.example.com\", \"service\": \"s\"", 1, 54, "expected , or }"),
        ("", 1, 1, "empty"),
        ("{\"baseURL\": \"https://api.example.com\", \"service\": \"s\", \"timeout\": 1e400}", 1, 67, "too large"),
        ("[1, 2]", 1, 1, "JSON object"),
    ]

    @Test(arguments: nonStandard)
    func aFileThatIsNotStandardJSONIsRefusedWithItsLineAndColumn(json: String, line: Int, column: Int, says: String) async throws {
        let error = await expectConfigError { _ = try await Self.load(json) }
        #expect(error?.kind == .notStandardJSON)
        #expect(error?.line == line && error?.column == column, "\(String(describing: error?.line)):\(String(describing: error?.column))")
        let description = error?.description ?? ""
        #expect(
            description.contains("mistakes.json") && description.contains("line \(line), column \(column)") && description.contains(says),
            "\(description)")
    }

    @Test func deepNestingIsRefusedWithoutExhaustingTheStack() async throws {
        let json =
            "{\"baseURL\": \"https://api.example.com\", \"service\": \"s\", \"x\": " + String(repeating: "[", count: 100_000)
            + String(repeating: "]", count: 100_000) + "}"
        let error = await expectConfigError { _ = try await Self.load(json) }
        #expect(error?.kind == .notStandardJSON && error?.description.contains("nesting") == true)
    }

    @Test func standardJSONOfEveryKindStillLoads() async throws {
        let config = try await Self.load(
            #"{"baseURL":"https://api.example.com/v1","service":"s\u00e9\ud83d\ude00\n","timeout":2.5e0,"maxResponseBytes":1024,"#
                + #""logging":{"maskedHeaders":[],"maskedBodyKeys":["a\"b"]},"cache":{"storesAuthorizedResponses":false},"http":{"tls":{"minimumVersion":1.3}}}"#
        )
        #expect(config.service == "sé😀\n" && config.timeout == .milliseconds(2500))
    }

    // MARK: - The package's own samples

    /// The package's folder.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test(arguments: ["development", "production", "test"])
    func theShippedConfigurationsLoad(_ environment: String) async throws {
        let config = try await APIConfig.load(
            file: Self.root.appendingPathComponent("Configs/\(environment).json").path, environmentVariables: [:])
        #expect(!config.service.isEmpty)
        for service in ["billing"] where environment != "test" {
            _ = try await APIConfig.load(
                file: Self.root.appendingPathComponent("Configs/\(environment).json").path, environmentVariables: [:], service: service)
        }
    }

    /// The configuration samples of the README and the documentation: whole files, or members
    /// (`"authentication": {…}`) completed with a base URL and a service.
    @Test func theDocumentationsConfigurationSamplesLoad() async throws {
        let documents = [
            "README.md", "Sources/Resourceful/Docs.docc/Credentials.md", "Sources/Resourceful/Docs.docc/Configuration.md",
            "Sources/ResourcefulOAuth2/Docs.docc/ResourcefulOAuth2.md",
        ]
        var checked = 0
        for document in documents {
            guard let text = try? String(contentsOf: Self.root.appendingPathComponent(document), encoding: .utf8) else { continue }
            for sample in text.components(separatedBy: "```json\n").dropFirst().compactMap({ $0.components(separatedBy: "\n```").first }) {
                let trimmed = sample.trimmingCharacters(in: .whitespacesAndNewlines)
                let sections = ["\"baseURL\"", "\"authentication\"", "\"services\"", "\"limits\""]
                guard sections.contains(where: { trimmed.contains($0) }) else { continue }
                // A whole file, an object of sections without a base URL, or members.
                let file =
                    trimmed.contains("\"baseURL\"") && trimmed.hasPrefix("{") ? trimmed
                    : trimmed.hasPrefix("{") ? "{\(Self.base), \(trimmed.dropFirst())" : "{\(Self.base), \(trimmed)}"
                do {
                    _ = try await Self.load(file)
                } catch {
                    Issue.record("a sample of \(document) does not load: \(error)\n\(sample)")
                }
                checked += 1
            }
        }
        #expect(checked >= 6)
    }
}
