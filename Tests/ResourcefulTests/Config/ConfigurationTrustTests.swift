import Foundation
@testable import Resourceful
import Testing

/// A configuration the user did not write cannot pick an arbitrary secret: the environment
/// storage's prefix stays in its namespace unless set outside the file, and a file found in the
/// working directory is marked as not chosen.
@Suite struct ConfigurationTrustTests {
    static func folder(_ json: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("trust-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(json.utf8).write(to: folder.appendingPathComponent("x.json"))
        return folder
    }

    static func environmentConfig(prefix: String) -> String {
        #"{"baseURL": "https://api.example", "service": "s", "authentication": {"storages": ["environment"], "environment": {"prefix": "\#(prefix)"}}}"#
    }

    @Test(arguments: ["GITHUB", "AWS", "RESOURCEFUL", "RESOURCEFUL_AUTHX", "resourceful_auth"])
    func aFileCannotPointTheEnvironmentStorageAtOtherVariables(_ prefix: String) async throws {
        let folder = try Self.folder(Self.environmentConfig(prefix: prefix))
        defer { try? FileManager.default.removeItem(at: folder) }
        let error = await #expect(throws: APIError.self) {
            _ = try await APIConfig.load(environment: "x", configDirectory: folder.path, environmentVariables: ["GITHUB_TOKEN": "ghp-victim-5e2"])
        }
        #expect((error?.underlying as? APIConfigError)?.key == "authentication.environment.prefix")
        #expect(error.map { "\($0)" }?.contains("RESOURCEFUL_AUTHENTICATION_ENVIRONMENT_PREFIX") == true)
        #expect(error.map { "\($0)" }?.contains("ghp-victim") == false)
    }

    @Test func aServiceCannotEither() async throws {
        let folder = try Self.folder(
            #"{"baseURL": "https://api.example", "service": "s", "authentication": {"storages": ["environment"]}, "services": {"gh": {"authentication": {"environment": {"prefix": "GITHUB"}}}}}"#
        )
        defer { try? FileManager.default.removeItem(at: folder) }
        let error = await #expect(throws: APIError.self) {
            _ = try await APIConfig.load(environment: "x", configDirectory: folder.path, environmentVariables: [:], service: "gh")
        }
        #expect((error?.underlying as? APIConfigError)?.key == "services.gh.authentication.environment.prefix")
    }

    @Test(arguments: ["RESOURCEFUL_AUTH", "RESOURCEFUL_AUTH_STAGING"])
    func aPrefixInItsOwnNamespaceIsTaken(_ prefix: String) async throws {
        let folder = try Self.folder(Self.environmentConfig(prefix: prefix))
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = try await APIConfig.load(environment: "x", configDirectory: folder.path, environmentVariables: [:])
        #expect(config.authentication.environmentPrefix == prefix)
    }

    @Test func anotherPrefixIsTakenFromItsVariableSetOutsideTheFile() async throws {
        let folder = try Self.folder(Self.environmentConfig(prefix: "GITHUB"))
        defer { try? FileManager.default.removeItem(at: folder) }
        let variables = ["RESOURCEFUL_AUTHENTICATION_ENVIRONMENT_PREFIX": "GITHUB", "GITHUB_S_TOKEN": "chosen-by-the-user"]
        let dependencies = try await APIDependencies.live(environment: "x", configDirectory: folder.path, environmentVariables: variables)
        try await dependencies.transport.shutdown()
        #expect(try await dependencies.authenticationStorage.authenticationHeader(for: "s") == "Bearer chosen-by-the-user")
    }

    @Test func aFileFoundInTheWorkingDirectoryIsNotChosenAndOneNamedIs() async throws {
        let folder = try Self.folder(Self.environmentConfig(prefix: "RESOURCEFUL_AUTH"))
        defer { try? FileManager.default.removeItem(at: folder) }
        let named = try await APIConfig.load(environment: "x", configDirectory: folder.path, environmentVariables: [:])
        #expect(named.authentication.origin?.isChosen == true)
        try named.refuseCredentialsFromUnchosenFile(howToChoose: "choose it")
        let byVariable = try await APIConfig.load(environment: "x", environmentVariables: ["RESOURCEFUL_CONFIG_DIR": folder.path])
        #expect(byVariable.authentication.origin?.isChosen == true)

        // The working directory's Configs (the package's own, where the tests run).
        guard FileManager.default.fileExists(atPath: "Configs/production.json") else { return }
        let found = try await APIConfig.load(environment: "production", environmentVariables: [:])
        #expect(found.authentication.origin?.isChosen == false)
        let error = #expect(throws: APIError.self) { try found.refuseCredentialsFromUnchosenFile(howToChoose: "pass --config-directory Configs") }
        #expect((error?.underlying as? APIConfigError)?.kind == .unchosenFile)
        #expect(error.map { "\($0)" }?.contains("Configs/production.json") == true)
        #expect(error.map { "\($0)" }?.contains("--config-directory Configs") == true)
        // Made in code, or from a file named by the caller: chosen.
        let file = try await APIConfig.load(file: "Configs/production.json", environmentVariables: [:])
        try file.refuseCredentialsFromUnchosenFile(howToChoose: "")
    }

    /// `folder` as a path relative to the working directory, whatever it is: enough `..` to
    /// reach the root (where `..` stays), then the absolute path.
    static func relative(_ folder: URL) -> String {
        String(repeating: "../", count: 64) + folder.path.drop { $0 == "/" }
    }

    @Test func aRelativeConfigDirectoryVariableIsReadButChoosesNothing() async throws {
        let folder = try Self.folder(Self.environmentConfig(prefix: "RESOURCEFUL_AUTH"))
        defer { try? FileManager.default.removeItem(at: folder) }
        // A variable outlives the folder it was set in: a relative one names whichever folder
        // of that name the working directory holds, such as a cloned repository's Configs.
        let relative = try await APIConfig.load(environment: "x", environmentVariables: ["RESOURCEFUL_CONFIG_DIR": Self.relative(folder)])
        #expect(relative.service == "s")
        #expect(relative.authentication.origin?.isChosen == false)
        let error = #expect(throws: APIError.self) { try relative.refuseCredentialsFromUnchosenFile(howToChoose: "choose it") }
        #expect((error?.underlying as? APIConfigError)?.kind == .unchosenFile)
        #expect(error.map { "\($0)" }?.contains("RESOURCEFUL_CONFIG_DIR is a relative path") == true, "\(String(describing: error))")
        #expect(error.map { "\($0)" }?.contains("absolute path") == true)
        // The same path given for this run (--config-directory) is a choice.
        let option = try await APIConfig.load(environment: "x", configDirectory: Self.relative(folder), environmentVariables: [:])
        #expect(option.authentication.origin?.isChosen == true)
    }

    @Test func anEmptyConfigDirectoryIsUnset() async throws {
        let folder = try Self.folder(Self.environmentConfig(prefix: "RESOURCEFUL_AUTH"))
        defer { try? FileManager.default.removeItem(at: folder) }
        // Empty is not a choice: the working directory's Configs is read, not chosen.
        #expect(APIConfig.file(environment: "x", configDirectory: "", variables: [:]).hasSuffix("/Configs/x.json"))
        #expect(APIConfig.file(environment: "x", configDirectory: nil, variables: ["RESOURCEFUL_CONFIG_DIR": ""]).hasSuffix("/Configs/x.json"))
        #expect(APIConfig.directory(configDirectory: "", variables: ["RESOURCEFUL_CONFIG_DIR": ""]).isChosen == false)
        #expect(APIConfig.directory(configDirectory: "", variables: ["RESOURCEFUL_CONFIG_DIR": folder.path]) == (folder.path, true, nil))
        guard FileManager.default.fileExists(atPath: "Configs/production.json") else { return }
        for (option, variable) in [("", nil), (nil, ""), ("", "")] as [(String?, String?)] {
            let config = try await APIConfig.load(
                environment: "production", configDirectory: option, environmentVariables: variable.map { ["RESOURCEFUL_CONFIG_DIR": $0] } ?? [:]
            )
            #expect(config.authentication.origin?.isChosen == false)
            #expect(config.authentication.origin?.file.hasSuffix("Configs/production.json") == true)
        }
    }
}
