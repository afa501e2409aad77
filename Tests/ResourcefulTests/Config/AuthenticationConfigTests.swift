import Foundation
import Resourceful
import Testing

@Suite struct AuthenticationConfigTests {
    static let configs = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Configs").path

    @Test func productionBuildsTheFileThenEnvironmentChain() async throws {
        let secrets = try FileAuthenticationStorageTests.Secrets()
        defer { secrets.remove() }
        let variables = [
            "RESOURCEFUL_AUTHENTICATION_FILE_DIRECTORY": secrets.directory.path,
            "RESOURCEFUL_AUTH_EXAMPLE_API_TOKEN": "from-environment",
        ]
        let dependencies = try await APIDependencies.live(environment: "production", configDirectory: Self.configs, environmentVariables: variables)
        let chain = try #require(dependencies.authenticationStorage as? ChainedAuthenticationStorage)
        #expect(chain.links.map(\.name) == ["file", "environment"])
        #expect(chain.links.map(\.isOptional) == [true, false])
        #expect((chain.links[0].storage as? FileAuthenticationStorage)?.directory == secrets.directory.path)

        // No file yet: the environment answers; a mounted file then takes precedence.
        #expect(try await dependencies.authenticationStorage.authenticationHeader(for: "example-api") == "Bearer from-environment")
        try secrets.replace("example-api", with: "from-file\n")
        #expect(try await dependencies.authenticationStorage.authenticationHeader(for: "example-api") == "Bearer from-file")
        try await dependencies.transport.shutdown()
    }

    @Test func developmentPassesOverAKeyringItCannotUse() async throws {
        let variables = ["RESOURCEFUL_AUTH_EXAMPLE_API_AUTHORIZATION": "Basic ZGV2OmRldg=="]
        let dependencies = try await APIDependencies.live(environment: "development", configDirectory: Self.configs, environmentVariables: variables)
        let chain = try #require(dependencies.authenticationStorage as? ChainedAuthenticationStorage)
        #expect(chain.links.map(\.name) == ["keyring", "environment"])
        #expect(try await chain.authenticationHeader(for: "example-api") == "Basic ZGV2OmRldg==")
        let keyring = await #expect(throws: AuthenticationStorageError.self) { _ = try await chain.links[0].storage.authenticationHeader(for: "example-api") }
        #expect(keyring?.kind == .unavailable)
        try await dependencies.transport.shutdown()
    }

    @Test func noStoragesMeansAnEmptyMemoryStorage() async throws {
        let dependencies = try await APIDependencies.live(environment: "test", configDirectory: Self.configs, environmentVariables: [:])
        #expect(dependencies.authenticationStorage is InMemoryAuthenticationStorage)
        try await dependencies.transport.shutdown()
    }

    @Test(arguments: [
        ("authentication.storages", #""authentication": {"storages": ["vault/1"]}"#),
        ("authentication.storages", #""authentication": {"storages": ["file", "file"]}"#),
        ("authentication.optional", #""authentication": {"optional": ["cloud"]}"#),
        ("authentication.file.directory", #""authentication": {"file": {"directory": "secrets"}}"#),
        ("authentication.environment.prefix", #""authentication": {"environment": {"prefix": ""}}"#),
    ])
    func invalidSettingsNameTheirKey(key: String, fragment: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("auth-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(#"{"baseURL": "https://a.example", "service": "s", \#(fragment)}"#.utf8).write(to: directory.appendingPathComponent("x.json"))
        let error = await expectConfigError {
            _ = try await APIConfig.load(environment: "x", configDirectory: directory.path, environmentVariables: [:])
        }
        #expect(error?.kind == .invalidValue)
        #expect(error?.key == key)
    }
}
