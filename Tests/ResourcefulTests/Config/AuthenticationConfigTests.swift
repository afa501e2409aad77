import Foundation
import Resourceful
import Testing

@Suite struct AuthenticationConfigTests {
    static let configs = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Configs").path

    /// A folder holding `production.json` as the package ships it, its secrets folder `directory`.
    static func production(secretsIn directory: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("production-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let shipped = try String(contentsOfFile: "\(configs)/production.json", encoding: .utf8)
        #expect(shipped.contains("\"/run/secrets\""))
        try Data(shipped.replacingOccurrences(of: "\"/run/secrets\"", with: "\"\(directory)\"").utf8)
            .write(to: folder.appendingPathComponent("production.json"))
        return folder
    }

    @Test func productionBuildsTheFileThenEnvironmentChain() async throws {
        let secrets = try FileAuthenticationStorageTests.Secrets()
        defer { secrets.remove() }
        let folder = try Self.production(secretsIn: secrets.directory.path)
        defer { try? FileManager.default.removeItem(at: folder) }
        let variables = ["RESOURCEFUL_AUTH_EXAMPLE_API_TOKEN": "from-environment"]
        let dependencies = try await APIDependencies.live(environment: "production", configDirectory: folder.path, environmentVariables: variables)
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

    @Test(arguments: [
        ["RESOURCEFUL_AUTHENTICATION_FILE_DIRECTORY"], ["RESOURCEFUL_SERVICES_BILLING_AUTHENTICATION_FILE_DIRECTORY"],
        // A certificate and its key go together: the first is named.
        ["RESOURCEFUL_HTTP_TLS_CLIENT_CERTIFICATE_FILE", "RESOURCEFUL_HTTP_TLS_CLIENT_KEY_FILE"],
    ])
    func aVariablePickingAnotherFolderOrClientIdentityIsRefused(variables: [String]) async throws {
        let variable = variables[0]
        let secrets = try FileAuthenticationStorageTests.Secrets()
        defer { secrets.remove() }
        let folder = try Self.production(secretsIn: secrets.directory.path)
        defer { try? FileManager.default.removeItem(at: folder) }
        // Another folder holding a file named like the service: another service's token, or a
        // link to it.
        let other = try FileAuthenticationStorageTests.Secrets()
        defer { other.remove() }
        try other.replace("example-api", with: "billing-token-8e1\n")
        let error = await #expect(throws: APIError.self) {
            _ = try await APIDependencies.live(
                environment: "production", configDirectory: folder.path,
                environmentVariables: Dictionary(uniqueKeysWithValues: variables.map { ($0, other.directory.path) }),
                service: variable.contains("BILLING") ? "billing" : nil
            )
        }
        let underlying = error?.underlying as? APIConfigError
        #expect(underlying?.kind == .movedByVariable && underlying?.source == variable, "\(String(describing: error))")
        #expect(error.map { "\($0)" }?.contains(other.directory.path) == false, "the value is not repeated")
        // The file's own folder from the variable is the file's.
        let same = try await APIDependencies.live(
            environment: "production", configDirectory: folder.path, environmentVariables: ["RESOURCEFUL_AUTHENTICATION_FILE_DIRECTORY": secrets.directory.path]
        )
        try await same.transport.shutdown()
    }

    @Test func aVariablePickingOtherStoragesIsRefusedAndTheFilesOwnListIsNot() async throws {
        let secrets = try FileAuthenticationStorageTests.Secrets()
        defer { secrets.remove() }
        let folder = try Self.production(secretsIn: secrets.directory.path)
        defer { try? FileManager.default.removeItem(at: folder) }
        let variable = "RESOURCEFUL_AUTHENTICATION_STORAGES"
        for storages in ["file,keyring", "environment,file", "file,environment,keyring"] {
            let error = await #expect(throws: APIError.self) {
                _ = try await APIConfig.load(environment: "production", configDirectory: folder.path, environmentVariables: [variable: storages])
            }
            let underlying = error?.underlying as? APIConfigError
            #expect(underlying?.kind == .movedByVariable && underlying?.source == variable, "\(storages): \(String(describing: error))")
        }
        let same = try await APIConfig.load(environment: "production", configDirectory: folder.path, environmentVariables: [variable: "file,environment"])
        #expect(same.authentication.storages == [.file, .environment])
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
