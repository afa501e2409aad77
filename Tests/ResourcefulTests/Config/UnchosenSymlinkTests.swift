import Foundation
@testable import Resourceful
import Testing

/// A folder that was not chosen (the working directory's `Configs`, a relative
/// `RESOURCEFUL_CONFIG_DIR`) may link its file, or be linked itself, to any JSON file the user can
/// read: a mistake found in such a file is told by its line and column, never by its keys, its
/// service names or its characters.
@Suite struct UnchosenSymlinkTests {
    /// A folder holding `secret.json` (`secret`), `Configs/development.json` linked to it,
    /// `private/development.json` (`secret` too) with `Linked` linked to `private`, and
    /// `Plain/development.json` (`secret`, no link).
    static func folder(_ secret: String) throws -> URL {
        let manager = FileManager.default
        let folder = manager.temporaryDirectory.resolvingSymlinksInPath().appendingPathComponent("unchosen-\(UUID().uuidString)")
        for name in ["Configs", "private", "Plain"] {
            try manager.createDirectory(at: folder.appendingPathComponent(name), withIntermediateDirectories: true)
        }
        try Data(secret.utf8).write(to: folder.appendingPathComponent("secret.json"))
        try Data(secret.utf8).write(to: folder.appendingPathComponent("private/development.json"))
        try Data(secret.utf8).write(to: folder.appendingPathComponent("Plain/development.json"))
        try manager.createSymbolicLink(atPath: folder.appendingPathComponent("Configs/development.json").path, withDestinationPath: "../secret.json")
        try manager.createSymbolicLink(atPath: folder.appendingPathComponent("Linked").path, withDestinationPath: "private")
        return folder
    }

    static func error(_ folder: URL, _ name: String, chosen: Bool = false, service: String? = nil) async -> APIError? {
        let relative = ConfigurationTrustTests.relative(folder.appendingPathComponent(name))
        do {
            if chosen {
                _ = try await APIConfig.load(environment: "development", configDirectory: relative, environmentVariables: [:], service: service)
            } else {
                _ = try await APIConfig.load(environment: "development", environmentVariables: ["RESOURCEFUL_CONFIG_DIR": relative], service: service)
            }
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [
        #"{"ghp_SECRETKEYNAME0123456789": {"token": "v"}}"#,
        #"{"baseURL": "https://a.example", "service": "s", "ghp_SECRETKEYNAME0123456789": 1, "ghp_SECRETKEYNAME0123456789": 2}"#,
        "ghp_SECRETKEYNAME0123456789=v\n",
        #"{"baseURL": "https://a.example", "service": "s", "services": {"ghp_SECRETKEYNAME0123456789": {}}}"#,
    ])
    func aLinkedFileInAnUnchosenFolderShowsNothingOfItself(_ secret: String) async throws {
        let folder = try Self.folder(secret)
        defer { try? FileManager.default.removeItem(at: folder) }
        for name in ["Configs", "Linked"] {
            let error = try #require(await Self.error(folder, name, service: "payroll"))
            #expect(error.kind == .invalidConfiguration)
            let underlying = try #require(error.underlying as? APIConfigError)
            #expect(underlying.kind == .unshownMistake)
            // Where, when the mistake has a place (a service the file does not describe has none).
            #expect(underlying.line != nil || secret.contains("services"))
            #expect(!"\(error)".contains("ghp") && !"\(error)".contains("'g'"), "\(error)")
            #expect("\(error)".contains("development.json") && "\(error)".contains("RESOURCEFUL_CONFIG_DIR"))
        }
        // Chosen, or not linked: shown as it is.
        let chosen = try #require(await Self.error(folder, "Configs", chosen: true, service: "payroll"))
        #expect("\(chosen)".contains("ghp") || "\(chosen)".contains("'g'"), "\(chosen)")
        let plain = try #require(await Self.error(folder, "Plain", service: "payroll"))
        #expect("\(plain)".contains("ghp") || "\(plain)".contains("'g'"), "\(plain)")
    }

    @Test func aLinkedFileWithoutAMistakeIsRead() async throws {
        let folder = try Self.folder(#"{"baseURL": "https://a.example", "service": "s"}"#)
        defer { try? FileManager.default.removeItem(at: folder) }
        let relative = ConfigurationTrustTests.relative(folder.appendingPathComponent("Configs"))
        let config = try await APIConfig.load(environment: "development", environmentVariables: ["RESOURCEFUL_CONFIG_DIR": relative])
        #expect(config.service == "s" && config.authentication.origin?.isChosen == false)
        // A mistake in the variables is not the file's: still named.
        let variable = await #expect(throws: APIError.self) {
            _ = try await APIConfig.load(environment: "development", environmentVariables: ["RESOURCEFUL_CONFIG_DIR": relative, "RESOURCEFUL_TIMOUT": "1"])
        }
        #expect(variable.map { "\($0)" }?.contains("RESOURCEFUL_TIMOUT") == true)
    }

    @Test func theWalkSeesLinksOnTheWayAndNotBeyond() throws {
        let folder = try Self.folder("{}")
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(RegularFile.passesThroughSymbolicLink(folder.appendingPathComponent("Configs/development.json").path))
        #expect(RegularFile.passesThroughSymbolicLink(folder.appendingPathComponent("Linked/development.json").path))
        #expect(!RegularFile.passesThroughSymbolicLink(folder.appendingPathComponent("Plain/development.json").path))
        #expect(!RegularFile.passesThroughSymbolicLink(folder.appendingPathComponent("Plain/absent.json").path))
        #expect(!RegularFile.passesThroughSymbolicLink(ConfigurationTrustTests.relative(folder.appendingPathComponent("Plain/development.json"))))
    }
}
