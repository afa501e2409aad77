import Configuration
import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

/// `APIConfig(configReader:)`: an app's own swift-configuration reader as the source.
@Suite struct ConfigReaderTests {
    private func reader(_ values: [AbsoluteConfigKey: ConfigValue]) -> ConfigReader {
        ConfigReader(provider: InMemoryProvider(values: values)).scoped(to: "upstream")
    }

    @Test func readsTheKeysUnderTheAppsScope() throws {
        let config = try APIConfig(
            configReader: reader([
                "upstream.baseURL": "https://api.example.com/v1",
                "upstream.service": "example-api",
                "upstream.timeout": 2.5,
                "upstream.retry.maxAttempts": 5,
                "upstream.coding.keyStrategy": "snakeCase",
                "upstream.logging.maskedHeaders": .init(.stringArray(["X-Tenant"]), isSecret: false),
                "upstream.http.idleTimeout": 30,
                "upstream.http.decompression": false,
                "upstream.authentication.storages": .init(.stringArray(["environment"]), isSecret: false),
                "other.service": "not-this-one",
            ])
        )
        #expect(config.baseURL.absoluteString == "https://api.example.com/v1")
        #expect(config.service == "example-api")
        #expect(config.timeout == .milliseconds(2500))
        #expect(config.retry.maxAttempts == 5)
        #expect(config.coding.keyStrategy == .snakeCase)
        #expect(config.logging.maskedHeaders == ["X-Tenant"])
        #expect(config.http.idleTimeout == .seconds(30))
        #expect(config.http.decompression == false)
        #expect(config.authentication.storages == [.environment])
    }

    @Test func aValueOfTheWrongTypeNamesTheKeyNotTheValue() async {
        let problem = await expectConfigError {
            _ = try APIConfig(
                configReader: reader([
                    "upstream.baseURL": "https://api.example.com",
                    "upstream.service": "example-api",
                    "upstream.retry.maxAttempts": "several-SECRET",
                ])
            )
        }
        #expect(problem?.kind == .wrongType)
        #expect(problem?.key == "retry.maxAttempts")
        #expect(problem?.source == "configuration")
        #expect(problem?.description.contains("SECRET") == false)
    }

    @Test func missingAndOutOfRangeValuesAreTypedErrors() async {
        let missing = await expectConfigError { _ = try APIConfig(configReader: reader(["upstream.service": "s"])) }
        #expect(missing?.kind == .missingKey)
        #expect(missing?.key == "baseURL")
        let outOfRange = await expectConfigError {
            _ = try APIConfig(
                configReader: reader([
                    "upstream.baseURL": "https://api.example.com",
                    "upstream.service": "s",
                    "upstream.timeout": 1e300,
                ])
            )
        }
        #expect(outOfRange?.kind == .invalidValue)
        #expect(outOfRange?.key == "timeout")
    }

    @Test func loadingAFileReadsTheSameKeysAsAReader() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reader-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("staging.json").path
        try Data(
            #"{"baseURL": "https://api.example.com", "service": "s", "timeout": 4, "http": {"maxRedirects": 2}}"#.utf8
        ).write(to: URL(fileURLWithPath: file))
        let loaded = try await APIConfig.load(file: file, environmentVariables: ["RESOURCEFUL_RETRY_MAX_ATTEMPTS": "4"])
        let read = try APIConfig(
            configReader: reader([
                "upstream.baseURL": "https://api.example.com",
                "upstream.service": "s",
                "upstream.timeout": 4,
                "upstream.http.maxRedirects": 2,
                "upstream.retry.maxAttempts": 4,
            ])
        )
        #expect(loaded == read)
    }

    @Test func aConfigurationFromAReaderServesCalls() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/ping", .status(.noContent))
            let config = try APIConfig(
                configReader: reader([
                    "upstream.baseURL": .init(.string(server.baseURL.absoluteString + "/v1"), isSecret: false),
                    "upstream.service": "s",
                ])
            )
            try await AsyncHTTPClientTransport.withTransport(settings: config.http) { transport in
                let api = API(
                    dependencies: APIDependencies(
                        apiConfig: config,
                        authenticationStorage: InMemoryAuthenticationStorage(["s": "Bearer t"]),
                        transport: transport
                    )
                )
                _ = try await api.call(Ping())
                #expect(server.requests.first?.headerFields[.authorization] == "Bearer t")
            }
        }
    }
}

private struct Ping: ResourceRequest {
    typealias ResourceType = Empty
    let verb = ResourceVerb.show
    let path: ResourcePath = "ping"
}

/// The `http.tls.*` keys.
@Suite struct TLSConfigKeyTests {
    private func config(_ values: [AbsoluteConfigKey: ConfigValue]) throws -> APIConfig {
        var all: [AbsoluteConfigKey: ConfigValue] = ["baseURL": "https://api.example.com", "service": "s"]
        all.merge(values) { $1 }
        return try APIConfig(configReader: ConfigReader(provider: InMemoryProvider(values: all)))
    }

    @Test func readsTheTrustSettings() throws {
        let read = try config([
            "http.tls.caFile": "/etc/company/ca.pem",
            "http.tls.caDirectory": "/etc/company/cas",
            "http.tls.trustSystemRoots": false,
            "http.tls.minimumVersion": "1.3",
        ])
        #expect(read.http.tls == APIConfig.TLSSettings(caFile: "/etc/company/ca.pem", caDirectory: "/etc/company/cas", trustSystemRoots: false, minimumVersion: .v1_3))
        #expect(try config(["http.tls.minimumVersion": 1.3]).http.tls.minimumVersion == .v1_3)
        #expect(try config([:]).http.tls == APIConfig.TLSSettings())
    }

    @Test func refusesAnUnknownVersionAndAnEmptyPath() async {
        let version = await expectConfigError { _ = try config(["http.tls.minimumVersion": "1.1"]) }
        #expect(version?.key == "http.tls.minimumVersion")
        let path = await expectConfigError { _ = try config(["http.tls.caFile": ""]) }
        #expect(path?.key == "http.tls.caFile")
    }
}
