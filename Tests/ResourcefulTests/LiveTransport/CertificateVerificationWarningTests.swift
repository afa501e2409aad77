import Foundation
import InMemoryLogging
import Logging
@testable import Resourceful
import Testing

/// Turning certificate verification off, from a file, a variable or code, is said once per
/// transport, at `warning`, through the logger the dependencies are given.
@Suite struct CertificateVerificationWarningTests {
    static func warnings(_ logs: InMemoryLogHandler) -> [String] {
        logs.entries.filter { $0.level == .warning }.map { "\($0.message)" }
    }

    @Test func aTransportThatTrustsAnyCertificateSaysSoOnce() async throws {
        let logs = InMemoryLogHandler()
        let logger = Logger(label: "test") { _ in logs }
        var settings = APIConfig.HTTPSettings()
        settings.dangerouslyDisableCertificateVerification = true
        let transport = AsyncHTTPClientTransport(settings: settings, environment: [:], logger: logger)
        #expect(Self.warnings(logs).count == 1)
        #expect(Self.warnings(logs).first?.contains("http.dangerouslyDisableCertificateVerification") == true)
        try await transport.shutdown()

        let quiet = InMemoryLogHandler()
        let verifying = AsyncHTTPClientTransport(settings: APIConfig.HTTPSettings(), environment: [:], logger: Logger(label: "test") { _ in quiet })
        #expect(Self.warnings(quiet).isEmpty)
        try await verifying.shutdown()
    }

    @Test func theLiveDependenciesWarnThroughTheirLogger() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-tls-warning-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(#"{"baseURL": "https://127.0.0.1:9", "service": "s"}"#.utf8).write(to: directory.appendingPathComponent("test.json"))
        let config = try await APIConfig.load(
            environment: "test", configDirectory: directory.path,
            environmentVariables: ["RESOURCEFUL_HTTP_DANGEROUSLY_DISABLE_CERTIFICATE_VERIFICATION": "true"]
        )
        #expect(config.http.dangerouslyDisableCertificateVerification)
        let logs = InMemoryLogHandler()
        let transport = try await APIDependencies.transport(
            for: config, storage: InMemoryAuthenticationStorage(), environment: [:], logger: Logger(label: "test") { _ in logs }
        )
        #expect(Self.warnings(logs).count == 1)
        try await transport.shutdown()
    }

    @Test func aSharedTransportWarnsOnceForAllItsShares() async throws {
        var config = APIConfig(baseURL: URL(string: "https://127.0.0.1:9")!, service: "s")
        config.http.dangerouslyDisableCertificateVerification = true
        let logs = InMemoryLogHandler()
        let logger = Logger(label: "test") { _ in logs }
        let file = "/shared-\(UUID().uuidString).json"
        var shares: [any HTTPTransport] = []
        for _ in 0..<3 {
            shares.append(
                try await APIDependencies.transport(
                    for: config, storage: InMemoryAuthenticationStorage(), environment: [:], sharedAs: file, logger: logger
                )
            )
        }
        #expect(Self.warnings(logs).count == 1)
        for share in shares { try await share.shutdown() }
        // Made again once the last share was given back: a new transport, one more warning.
        let again = try await APIDependencies.transport(
            for: config, storage: InMemoryAuthenticationStorage(), environment: [:], sharedAs: file, logger: logger
        )
        #expect(Self.warnings(logs).count == 2)
        try await again.shutdown()
    }
}
