import Foundation
import InMemoryLogging
import Logging
@testable import Resourceful
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Secret files others can read are used with a warning (orchestrators mount them so); files of
/// another user are refused; key files named by path are read as ssh reads them.
@Suite struct SecretFilePermissionTests {
    static func warnings(_ logs: InMemoryLogHandler) -> [String] {
        logs.entries.filter { $0.level == .warning }.map { "\($0.message)" }
    }

    @Test func aFileOthersCanReadIsUsedWithOneWarningPerVersion() async throws {
        let secrets = try FileAuthenticationStorageTests.Secrets()
        defer { secrets.remove() }
        try secrets.replace("billing", with: "tok-1\n")
        #expect(chmod(secrets.path("billing"), 0o644) == 0)
        let logs = InMemoryLogHandler()
        let storage = FileAuthenticationStorage(directory: secrets.directory.path, refreshInterval: .zero, logger: Logger(label: "test") { _ in logs })
        #expect(try await storage.authenticationHeader(for: "billing") == "Bearer tok-1")
        #expect(try await storage.secret(named: "billing") == "tok-1")
        #expect(Self.warnings(logs).count == 1)
        #expect(Self.warnings(logs).first?.contains("chmod 600") == true)
        let text = logs.entries.map { "\($0.message) \($0.metadata)" }.joined()
        #expect(!text.contains("tok-1"))

        // Made private: no more warnings.
        #expect(chmod(secrets.path("billing"), 0o600) == 0)
        #expect(try await storage.authenticationHeader(for: "billing") == "Bearer tok-1")
        #expect(Self.warnings(logs).count == 1)
    }

    @Test func aSymlinkOutOfTheDirectoryIsUsedWithAWarningAndAnOrchestratorsIsNot() async throws {
        let secrets = try FileAuthenticationStorageTests.Secrets()
        defer { secrets.remove() }
        let outside = try FileAuthenticationStorageTests.Secrets()
        defer { outside.remove() }
        try outside.replace("elsewhere", with: "tok-out\n")
        try FileManager.default.createDirectory(atPath: secrets.path("..data"), withIntermediateDirectories: true)
        try Data("tok-in\n".utf8).write(to: URL(fileURLWithPath: secrets.path("..data/inside")))
        #expect(chmod(outside.path("elsewhere"), 0o600) == 0 && chmod(secrets.path("..data/inside"), 0o600) == 0)
        #expect(symlink(outside.path("elsewhere"), secrets.path("billing")) == 0)
        #expect(symlink("..data/inside", secrets.path("ledger")) == 0)
        let logs = InMemoryLogHandler()
        let storage = FileAuthenticationStorage(directory: secrets.directory.path, logger: Logger(label: "test") { _ in logs })
        #expect(try await storage.authenticationHeader(for: "ledger") == "Bearer tok-in")
        #expect(Self.warnings(logs).isEmpty)
        #expect(try await storage.authenticationHeader(for: "billing") == "Bearer tok-out")
        #expect(Self.warnings(logs).count == 1)
        #expect(Self.warnings(logs).first?.contains("symbolic link") == true)
    }

    @Test func aFileOfAnotherUserIsRefused() async throws {
        // Only root can give a file away.
        guard geteuid() == 0 else { return }
        let secrets = try FileAuthenticationStorageTests.Secrets()
        defer { secrets.remove() }
        try secrets.replace("billing", with: "planted-token\n")
        #expect(chmod(secrets.path("billing"), 0o600) == 0)
        #expect(chown(secrets.path("billing"), 65534, 65534) == 0)
        let storage = FileAuthenticationStorage(directory: secrets.directory.path)
        let error = await #expect(throws: AuthenticationStorageError.self) { _ = try await storage.authenticationHeader(for: "billing") }
        #expect(error?.kind == .unreadable)
        #expect(error.map { "\($0)" }?.contains("another user") == true)
        await #expect(throws: AuthenticationStorageError.self) { _ = try await storage.secret(named: "billing") }
    }

    @Test(arguments: [mode_t(0o644), 0o640, 0o604, 0o620])
    func aPrivateKeyFileOpenToOthersIsRefusedNamingTheFix(_ mode: mode_t) throws {
        let secrets = try FileAuthenticationStorageTests.Secrets()
        defer { secrets.remove() }
        try secrets.replace("key.pem", with: "-----BEGIN PRIVATE KEY-----\n")
        #expect(chmod(secrets.path("key.pem"), mode) == 0)
        let error = #expect(throws: PrivateFileError.self) { _ = try PrivateFile.contents(of: secrets.path("key.pem"), maximumBytes: 1024) }
        #expect(error?.reason.contains("chmod 600 \(secrets.path("key.pem"))") == true)
    }

    @Test func aPrivateKeyFileIsNotReadThroughASymlinkNorAsAFIFO() throws {
        let secrets = try FileAuthenticationStorageTests.Secrets()
        defer { secrets.remove() }
        try secrets.replace("key.pem", with: "-----BEGIN PRIVATE KEY-----\n")
        #expect(chmod(secrets.path("key.pem"), 0o600) == 0)
        #expect(try PrivateFile.contents(of: secrets.path("key.pem"), maximumBytes: 1024).count == 28)
        #expect(symlink(secrets.path("key.pem"), secrets.path("link.pem")) == 0)
        let link = #expect(throws: PrivateFileError.self) { _ = try PrivateFile.contents(of: secrets.path("link.pem"), maximumBytes: 1024) }
        #expect(link?.reason.contains("symbolic link") == true)
        #expect(mkfifo(secrets.path("fifo.pem"), 0o600) == 0)
        #expect(throws: PrivateFileError.self) { _ = try PrivateFile.contents(of: secrets.path("fifo.pem"), maximumBytes: 1024) }
    }
}
