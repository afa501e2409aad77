import Foundation
import Logging
import Resourceful
import ResourcefulKeyring
import ResourcefulOAuth2

/// What the tests call: the Django app's protected resource.
struct Me: Codable, Sendable {
    var user: String?
    var client_id: String
    var scope: String?
}

/// A temporary folder holding `x.json` and secret files, removed by ``remove()``.
struct TestConfig {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("oauth-config-\(UUID().uuidString)")

    /// Writes the secret files `secrets` (name → content) and the configuration `json` makes
    /// from the secrets' folder.
    init(secrets: [String: String] = [:], _ json: (_ secrets: String) -> String) throws {
        let folder = directory.appendingPathComponent("secrets")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, value) in secrets {
            try Data((value + "\n").utf8).write(to: folder.appendingPathComponent(name))
        }
        try Data(json(folder.path).utf8).write(to: directory.appendingPathComponent("x.json"))
    }

    var secrets: String { directory.appendingPathComponent("secrets").path }

    /// The live dependencies of `x.json`, with the OAuth 2 storage kind known.
    func dependencies(_ factories: [any AuthenticationStorageFactory] = [OAuth2StorageFactory(), KeyringStorageFactory()]) async throws -> APIDependencies {
        try await APIDependencies.live(environment: "x", configDirectory: directory.path, environmentVariables: [:], storageFactories: factories)
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}

extension OAuthServer {
    /// A configuration calling the Django API as `service-client` (or the JWT client), with
    /// `authentication.oauth2` set by `oauth2` (JSON members) and the client secret in a file.
    func clientCredentialsConfig(_ oauth2: String, service: String = "django-api", keyring account: String = "default") throws -> TestConfig {
        try TestConfig(secrets: ["service-client-secret": Self.serviceClient.secret]) { secrets in
            """
            {"baseURL": "\(issuer)/api", "service": "\(service)", "timeout": 30,
             "authentication": {"storages": ["oauth2"], "file": {"directory": "\(secrets)"}, "keyring": {"account": "\(account)"},
               "oauth2": {"issuer": "\(issuer)", \(oauth2)}}}
            """
        }
    }
}


/// Secrets kept in memory, written and read by unit tests of one step.
final class InMemoryWritableSecrets: WritableSecretStorage {
    private let secrets = Locked<[String: String]>([:])
    func secret(named name: String) async throws -> String? { secrets.withLock { $0[name] } }
    func storeSecret(_ secret: String, named name: String) async throws { secrets.withLock { $0[name] = secret } }
    func deleteSecret(named name: String) async throws -> Bool { secrets.withLock { $0.removeValue(forKey: name) != nil } }
}

/// Secrets from a dictionary, for unit tests of one step.
struct InMemorySecrets: SecretStorage {
    let secrets: [String: String]
    init(_ secrets: [String: String]) { self.secrets = secrets }
    func secret(named name: String) async throws -> String? { secrets[name] }
}
