import Foundation
import Testing

@testable import Resourceful

/// ``ConfigurationKeyTable`` and the settings types that read the keys agree: every key the table
/// declares is read (setting it changes the configuration), so the table holds no key that a file
/// could set to no effect.
@Suite struct ConfigurationKeyTableTests {
    /// A value other than the default for each key, and what else it needs set with it.
    static let values: [String: (value: String, with: String?)] = [
        "baseURL": (#""http://127.0.0.1:8/v2""#, nil),
        "service": (#""t""#, nil),
        "baseHeaders": (#"["X-A: 1"]"#, nil),
        "baseQueryItems": (#"["v=1"]"#, nil),
        "timeout": ("7", nil),
        "maxResponseBytes": ("1234", nil),
        "coding.keyStrategy": (#""snakeCase""#, nil),
        "coding.dateStrategy": (#""secondsSince1970""#, nil),
        "coding.decoder": (#""foundation""#, nil),
        "coding.arrayFormat": (#""comma""#, nil),
        "logging.level": (#""critical""#, nil),
        "logging.maskedHeaders": (#"["X-B"]"#, nil),
        "logging.maskedBodyKeys": (#"["pin"]"#, nil),
        "logging.maxBodyBytes": ("77", nil),
        "retry.maxAttempts": ("7", nil),
        "retry.baseDelay": ("0.3", nil),
        "retry.maxDelay": ("9", nil),
        "retry.retryableStatuses": (#"["599"]"#, nil),
        "http.maximumConnectionsPerHost": ("3", nil),
        "http.idleTimeout": ("11", nil),
        "http.connectTimeout": ("4", nil),
        "http.connectRetryBudget": ("2.5", nil),
        "http.maxRedirects": ("2", nil),
        "http.redirects.sensitiveHeaders": (#"["X-C"]"#, nil),
        "http.decompression": ("false", nil),
        "http.maxDecompressionRatio": ("7", nil),
        "http.version": (#""http1""#, nil),
        "http.proxy": (#""none""#, nil),
        // A proxy login goes only to a proxy the file names.
        "http.proxyCredentialService": (#""proxy-svc""#, #""http.proxy": "http://127.0.0.1:3128""#),
        "http.dangerouslyDisableCertificateVerification": ("true", nil),
        "http.tls.caFile": (#""/etc/ca.pem""#, nil),
        "http.tls.caDirectory": (#""/etc/certs""#, nil),
        "http.tls.trustSystemRoots": ("false", #""http.tls.caFile": "/etc/ca.pem""#),
        "http.tls.minimumVersion": (#""1.3""#, nil),
        "http.tls.clientCertificateFile": (#""/etc/c.pem""#, #""http.tls.clientKeyFile": "/etc/k.pem""#),
        "http.tls.clientKeyFile": (#""/etc/k2.pem""#, #""http.tls.clientCertificateFile": "/etc/c.pem""#),
        "cache.storesAuthorizedResponses": ("true", nil),
        "limits.rate.requestsPerSecond": ("2.5", nil),
        "limits.rate.burst": ("3", #""limits.rate.requestsPerSecond": 1"#),
        "limits.maxPause": ("12", nil),
        "limits.breaker.failureRatio": ("0.25", nil),
        "limits.breaker.minimumCalls": ("7", nil),
        "limits.breaker.window": ("45", nil),
        "limits.breaker.openInterval": ("3", nil),
        "limits.breaker.probes": ("2", nil),
        "limits.breaker.failureStatuses": (#"["502"]"#, nil),
        "limits.breaker.windowCalls": ("50", nil),
        "limits.breaker.slowCallDuration": ("2.5", nil),
        "limits.breaker.slowCallRatio": ("0.5", #""limits.breaker.slowCallDuration": 2"#),
        "authentication.storages": (#"["file"]"#, nil),
        "authentication.optional": (#"["file"]"#, #""authentication.storages": ["file"]"#),
        "authentication.headerName": (#""X-Api-Key""#, nil),
        "authentication.file.directory": (#""/srv/secrets""#, nil),
        "authentication.file.scheme": (#""Token""#, nil),
        "authentication.file.refreshInterval": ("5", nil),
        "authentication.environment.prefix": (#""RESOURCEFUL_AUTH_X""#, nil),
        "authentication.environment.scheme": (#""Token""#, nil),
        "sharedState.kind": (#""postgres""#, nil),
    ]

    /// Loads the base with `members`; a member setting `baseURL` or `service` replaces the base's.
    static func load(_ members: [String]) async throws -> APIConfig {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-keys-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        var all = [#""baseURL": "http://127.0.0.1:9/v1""#, #""service": "s""#]
        all.removeAll { base in members.contains { $0.prefix(10) == base.prefix(10) } }
        try Data(("{" + (all + members).joined(separator: ", ") + "}").utf8).write(to: file)
        return try await APIConfig.load(file: file.path, environmentVariables: [:])
    }

    @Test func everyKeyOfTheTableHasATestValue() {
        #expect(Set(Self.values.keys) == Set(ConfigurationKeyTable.coreKeys))
        #expect(ConfigurationKeyTable.coreKeys.count == Set(ConfigurationKeyTable.coreKeys).count, "a key declared twice")
    }

    @Test(arguments: ConfigurationKeyTable.coreKeys)
    func everyKeyOfTheTableIsRead(_ key: String) async throws {
        guard let (value, with) = Self.values[key] else { return }
        let companions = with.map { [$0] } ?? []
        // A client certificate and its key are set together or not at all.
        let without = try await Self.load(key.hasPrefix("http.tls.client") ? [] : companions)
        let set = try await Self.load(companions + ["\"\(key)\": \(value)"])
        #expect(set != without, "setting \(key) changed nothing")
    }

    @Test func everyModuleKeyIsAccepted() async throws {
        var members: [String] = []
        for module in ConfigurationKeyTable.modules {
            for key in module.keys { members.append("\"\(module.section).\(module.kind).\(key)\": \"x\"") }
        }
        _ = try await Self.load(members)
    }
}
