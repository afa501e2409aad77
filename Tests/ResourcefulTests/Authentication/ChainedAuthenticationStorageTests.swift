import Foundation
import InMemoryLogging
import Logging
import Resourceful
import ResourcefulTesting
import Testing

@Suite struct ChainedAuthenticationStorageTests {
    struct Failing: AuthenticationStorage {
        func authenticationHeader(for service: String) async throws -> String? {
            throw AuthenticationStorageError(kind: .unavailable, source: "test storage", detail: "is down")
        }
    }

    /// A storage's own error whose text holds what it was reading: not known to be safe to show.
    struct Leaky: AuthenticationStorage {
        struct VaultFailure: Error, CustomStringConvertible {
            var description: String { "vault refused token s3cr3t-vault" }
        }

        func authenticationHeader(for service: String) async throws -> String? {
            throw VaultFailure()
        }
    }

    static func logger() -> (Logger, InMemoryLogHandler) {
        let logs = InMemoryLogHandler()
        return (Logger(label: "chain") { _ in logs }, logs)
    }

    @Test func anOptionalFailureOfUnknownTextIsLoggedByItsTypeAlone() async throws {
        let (logger, logs) = Self.logger()
        let chain = ChainedAuthenticationStorage([
            .init("vault", Leaky(), isOptional: true),
            .init("memory", InMemoryAuthenticationStorage(["a": "Bearer from-memory"])),
        ], logger: logger)
        #expect(try await chain.authenticationHeader(for: "a") == "Bearer from-memory")
        let warnings = logs.entries.filter { $0.level == .warning }
        #expect(warnings.count == 1)
        #expect(warnings.first?.metadata["resourceful.error"] == "VaultFailure")
        #expect(!logs.entries.contains { "\($0.message) \($0.metadata)".contains("s3cr3t") })
    }

    @Test func theFirstStorageWithAHeaderAnswers() async throws {
        let (logger, _) = Self.logger()
        let chain = ChainedAuthenticationStorage([
            .init("first", InMemoryAuthenticationStorage(["a": "Bearer from-first"])),
            .init("second", InMemoryAuthenticationStorage(["a": "Bearer from-second", "b": "Bearer only-second"])),
        ], logger: logger)
        #expect(try await chain.authenticationHeader(for: "a") == "Bearer from-first")
        #expect(try await chain.authenticationHeader(for: "b") == "Bearer only-second")
        #expect(try await chain.authenticationHeader(for: "c") == nil)
    }

    @Test func anOptionalFailureIsLoggedOnceAndPassedOver() async throws {
        let (logger, logs) = Self.logger()
        let chain = ChainedAuthenticationStorage([
            .init("keyring", Failing(), isOptional: true),
            .init("environment", EnvironmentAuthenticationStorage(environment: ["RESOURCEFUL_AUTH_A_TOKEN": "s3cr3t-env"])),
        ], logger: logger)
        for _ in 0..<5 {
            #expect(try await chain.authenticationHeader(for: "a") == "Bearer s3cr3t-env")
        }
        let warnings = logs.entries.filter { $0.level == .warning }
        #expect(warnings.count == 1)
        #expect(warnings.first?.metadata["resourceful.storage"] == "keyring")
        #expect(warnings.first?.metadata["resourceful.error"] == "test storage: is down")
        #expect(!logs.entries.contains { "\($0.message) \($0.metadata)".contains("s3cr3t") })
    }

    @Test func aRequiredFailureFailsTheCall() async throws {
        let (logger, _) = Self.logger()
        let chain = ChainedAuthenticationStorage([
            .init("file", Failing()),
            .init("environment", EnvironmentAuthenticationStorage(environment: ["RESOURCEFUL_AUTH_A_TOKEN": "never-reached"])),
        ], logger: logger)
        let error = await #expect(throws: AuthenticationStorageError.self) { _ = try await chain.authenticationHeader(for: "a") }
        #expect(error?.kind == .unavailable)
    }

    @Test func aFailureIsLoggedAgainAfterTheStorageRecovered() async throws {
        let (logger, logs) = Self.logger()
        let secrets = try FileAuthenticationStorageTests.Secrets()
        defer { secrets.remove() }
        let chain = ChainedAuthenticationStorage([
            .init("file", FileAuthenticationStorage(directory: secrets.directory.path, refreshInterval: .zero), isOptional: true)
        ], logger: logger)
        #expect(try await chain.authenticationHeader(for: "a") == nil)
        try secrets.replace("a", with: "back")
        #expect(try await chain.authenticationHeader(for: "a") == "Bearer back")
        try FileManager.default.removeItem(atPath: secrets.path("a"))
        #expect(try await chain.authenticationHeader(for: "a") == nil)
        #expect(logs.entries.filter { $0.level == .warning }.count == 2)
    }

    @Test func passesTheConformanceSuite() async throws {
        let (logger, _) = Self.logger()
        let memory = InMemoryAuthenticationStorage()
        let chain = ChainedAuthenticationStorage([
            .init("memory", memory),
            .init("environment", EnvironmentAuthenticationStorage(environment: [:])),
        ], logger: logger)
        try await AuthenticationStorageConformance(storage: chain) { header, service in
            memory.setAuthenticationHeader(header, for: service)
        }.run()
    }
}
