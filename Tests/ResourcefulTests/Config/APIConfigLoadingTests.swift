import Foundation
import HTTPTypes
import Logging
import Resourceful
import Testing

@Suite struct APIConfigLoadingTests {
    /// A scratch directory holding `name.json` with `json` in it.
    private func directory(with json: String, name: String = "staging") throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(json.utf8).write(to: directory.appendingPathComponent("\(name).json"))
        return directory.path
    }

    private let complete = """
        {
          "baseURL": "https://api.example.com/v2",
          "service": "example",
          "baseHeaders": ["User-Agent: test/1", "X-Team: core"],
          "timeout": 2.5,
          "maxResponseBytes": 2048,
          "coding": { "keyStrategy": "snakeCase", "dateStrategy": "secondsSince1970", "decoder": "foundation" },
          "logging": { "level": "debug", "maskedHeaders": ["X-Api-Key"], "maskedBodyKeys": ["pin"], "maxBodyBytes": 100 }
        }
        """

    @Test func loadsEveryKeyFromTheFile() async throws {
        let config = try await APIConfig.load(environment: "staging", configDirectory: directory(with: complete), environmentVariables: [:])
        #expect(config.baseURL.absoluteString == "https://api.example.com/v2")
        #expect(config.service == "example")
        #expect(config.baseHeaders == ["User-Agent": "test/1", "X-Team": "core"])
        #expect(config.timeout == .milliseconds(2500))
        #expect(config.maxResponseBytes == 2048)
        #expect(config.coding == APIConfig.Coding(keyStrategy: .snakeCase, dateStrategy: .secondsSince1970, decoder: .foundation))
        #expect(config.coding.makeResponseDecoder() is JSONDecoder)
        #expect(config.logging == APIConfig.LogSettings(level: .debug, maskedHeaders: ["X-Api-Key"], maskedBodyKeys: ["pin"], maxBodyBytes: 100))
    }

    @Test func retryAndHTTPSettings() async throws {
        let json = """
            {"baseURL": "https://a.example", "service": "s",
             "retry": {"maxAttempts": 5, "baseDelay": 0.25, "maxDelay": 2, "retryableStatuses": ["503", "429"]},
             "http": {"maximumConnectionsPerHost": 32, "connectTimeout": 1.5, "maxRedirects": 0,
                      "dangerouslyDisableCertificateVerification": true}}
            """
        let config = try await APIConfig.load(
            environment: "staging", configDirectory: directory(with: json), environmentVariables: ["RESOURCEFUL_RETRY_MAX_ATTEMPTS": "2"]
        )
        #expect(config.retry == APIConfig.RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(250), maxDelay: .seconds(2), retryableStatuses: [429, 503]))
        #expect(config.http == APIConfig.HTTPSettings(
            maximumConnectionsPerHost: 32, connectTimeout: .milliseconds(1500), maxRedirects: 0, dangerouslyDisableCertificateVerification: true
        ))
        let defaults = try await APIConfig.load(
            environment: "staging", configDirectory: directory(with: #"{"baseURL": "https://a.example", "service": "s"}"#), environmentVariables: [:]
        )
        #expect(defaults.retry == APIConfig.RetryPolicy())
        #expect(defaults.http.dangerouslyDisableCertificateVerification == false)
    }

    @Test func onlyBaseURLAndServiceAreRequired() async throws {
        let json = #"{"baseURL": "http://localhost:8080", "service": "s"}"#
        let config = try await APIConfig.load(environment: "staging", configDirectory: directory(with: json), environmentVariables: [:])
        #expect(config == APIConfig(baseURL: URL(string: "http://localhost:8080")!, service: "s"))
    }

    @Test func environmentVariablesOverrideTheFile() async throws {
        let config = try await APIConfig.load(
            environment: "staging",
            configDirectory: directory(with: complete),
            environmentVariables: [
                "RESOURCEFUL_BASE_URL": "https://override.example.com",
                "RESOURCEFUL_TIMEOUT": "7",
                "RESOURCEFUL_LOGGING_LEVEL": "error",
                "RESOURCEFUL_LOGGING_MASKED_BODY_KEYS": "pin,otp",
            ]
        )
        #expect(config.baseURL.absoluteString == "https://override.example.com")
        #expect(config.timeout == .seconds(7))
        #expect(config.logging.level == .error)
        #expect(config.logging.maskedBodyKeys == ["pin", "otp"])
        #expect(config.service == "example")
    }

    @Test func configDirectoryComesFromTheEnvironment() async throws {
        let directory = try directory(with: complete, name: "qa")
        let config = try await APIConfig.load(environment: "qa", environmentVariables: ["RESOURCEFUL_CONFIG_DIR": directory])
        #expect(config.service == "example")
    }

    @Test func missingFileNamesThePath() async throws {
        let error = await expectConfigError {
            _ = try await APIConfig.load(environment: "nowhere", configDirectory: "/nonexistent/dir", environmentVariables: [:])
        }
        #expect(error?.kind == .missingFile)
        #expect(error?.file == "/nonexistent/dir/nowhere.json")
        #expect(error?.description == "configuration file /nonexistent/dir/nowhere.json does not exist")
    }

    @Test func malformedFileNamesThePath() async throws {
        let directory = try directory(with: #"{"baseURL": "#)
        let error = await expectConfigError {
            _ = try await APIConfig.load(environment: "staging", configDirectory: directory, environmentVariables: [:])
        }
        #expect(error?.kind == .notStandardJSON)
        #expect(error?.description.contains("\(directory)/staging.json") == true)
        #expect(error?.line == 1 && error?.column == 13)
    }

    @Test func missingRequiredKey() async throws {
        let error = await expectConfigError {
            _ = try await APIConfig.load(
                environment: "staging", configDirectory: directory(with: #"{"baseURL": "https://a.example"}"#), environmentVariables: [:]
            )
        }
        #expect(error?.kind == .missingKey)
        #expect(error?.key == "service")
    }

    @Test(arguments: ["not a url", "/relative/path", "ftp://files.example.com", "https://user:hunter2@api.example.com"])
    func badBaseURL(url: String) async throws {
        let json = #"{"baseURL": "\#(url)", "service": "s"}"#
        let error = await expectConfigError {
            _ = try await APIConfig.load(environment: "staging", configDirectory: directory(with: json), environmentVariables: [:])
        }
        #expect(error?.kind == .invalidValue)
        #expect(error?.key == "baseURL")
        #expect(error?.description.contains("staging.json") == true)
        #expect(error?.description.contains("hunter2") == false)
    }

    @Test func wrongTypeInTheFileNamesFileAndKey() async throws {
        let json = #"{"baseURL": "https://a.example", "service": "s", "timeout": "soon"}"#
        let directory = try directory(with: json)
        let error = await expectConfigError {
            _ = try await APIConfig.load(environment: "staging", configDirectory: directory, environmentVariables: [:])
        }
        #expect(error?.kind == .wrongType)
        #expect(error?.key == "timeout")
        #expect(error?.source == "\(directory)/staging.json")
    }

    @Test func wrongTypeInTheEnvironmentNamesTheVariable() async throws {
        let error = await expectConfigError {
            _ = try await APIConfig.load(
                environment: "staging",
                configDirectory: directory(with: complete),
                environmentVariables: ["RESOURCEFUL_MAX_RESPONSE_BYTES": "lots"]
            )
        }
        #expect(error?.kind == .wrongType)
        #expect(error?.key == "maxResponseBytes")
        #expect(error?.source == "RESOURCEFUL_MAX_RESPONSE_BYTES")
    }

    @Test(arguments: [
        ("logging.level", #""logging": {"level": "loud"}"#),
        ("coding.keyStrategy", #""coding": {"keyStrategy": "kebab"}"#),
        ("coding.decoder", #""coding": {"decoder": "simdjson"}"#),
        ("timeout", #""timeout": -1"#),
        ("baseHeaders", #""baseHeaders": ["no colon here"]"#),
        ("retry.maxAttempts", #""retry": {"maxAttempts": 0}"#),
        ("retry.retryableStatuses", #""retry": {"retryableStatuses": ["teapot"]}"#),
        ("http.maxRedirects", #""http": {"maxRedirects": -1}"#),
    ])
    func invalidValues(key: String, fragment: String) async throws {
        let json = #"{"baseURL": "https://a.example", "service": "s", \#(fragment)}"#
        let error = await expectConfigError {
            _ = try await APIConfig.load(environment: "staging", configDirectory: directory(with: json), environmentVariables: [:])
        }
        #expect(error?.kind == .invalidValue)
        #expect(error?.key == key)
    }

    @Test(arguments: ["development", "production", "test"])
    func shippedConfigsLoad(environment: String) async throws {
        let configs = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Configs").path
        let config = try await APIConfig.load(environment: environment, configDirectory: configs, environmentVariables: [:])
        #expect(!config.service.isEmpty)
        #expect(config.coding.decoder == .fast)
    }
}
