import Foundation
import ProcessTestSupport
import Resourceful
import ResourcefulKeyring
import ResourcefulOAuth2
import Testing

/// `private_key_jwt` with the private key in a storage, by name (`authentication.oauth2.privateKey`),
/// against django-oauth-toolkit: an environment variable or a keyring item holds the PEM.
@Suite(.oauthServer, .serialized) struct PrivateKeyStorageTests {
    /// A configuration for `jwt-client` whose key is in `storage` as `jwt-client-key`, the keyring
    /// account `account`.
    static func config(_ server: OAuthServer, storage: String, account: String = "default") throws -> TestConfig {
        try server.clientCredentialsConfig("""
            "clientId": "\(OAuthServer.jwtClient)", "keyId": "test-key", "privateKey": {"storage": "\(storage)", "name": "jwt-client-key"}
            """, keyring: account)
    }

    static func call(_ config: TestConfig, variables: [String: String] = [:]) async throws -> Me {
        let api = API(dependencies: try await APIDependencies.live(
            environment: "x", configDirectory: config.directory.path, environmentVariables: variables,
            storageFactories: [OAuth2StorageFactory(), KeyringStorageFactory()]
        ))
        do {
            let me: Me = try await api.call(AdHocRequest<Me, Empty>(.show, "me"))
            try await api.shutdown()
            return me
        } catch {
            try await api.shutdown()
            throw error
        }
    }

    @Test func theKeyInAnEnvironmentVariableSignsTheAssertion() async throws {
        let server = try #require(OAuthServer.current)
        let config = try Self.config(server, storage: "environment")
        defer { config.remove() }
        let pem = try String(contentsOfFile: server.privateKeyFile, encoding: .utf8)
        let before = server.tokenRequests().count
        let me = try await Self.call(config, variables: ["RESOURCEFUL_AUTH_JWT_CLIENT_KEY": pem])
        #expect(me.client_id == OAuthServer.jwtClient)
        let requests = server.tokenRequests().dropFirst(before)
        #expect(requests.map(\.client_auth) == ["private_key_jwt"])
        #expect(requests.first?.status == 200)
    }

    @Test func theKeyInTheKeyringSignsTheAssertion() async throws {
        let server = try #require(OAuthServer.current)
        let account = "jwt-\(UUID().uuidString)"
        let config = try Self.config(server, storage: "keyring", account: account)
        defer { config.remove() }
        let keys = KeyringSecretStorage(account: account)
        try await keys.storeSecret(try String(contentsOfFile: server.privateKeyFile, encoding: .utf8), named: "jwt-client-key")
        let me = try await Self.call(config)
        _ = try await keys.deleteSecret(named: "jwt-client-key")
        #expect(me.client_id == OAuthServer.jwtClient)
    }

    @Test func aMissingOrUnusableKeyIsAnErrorThatShowsNoneOfIt() async throws {
        let server = try #require(OAuthServer.current)
        let config = try Self.config(server, storage: "environment")
        defer { config.remove() }
        let missing = await #expect(throws: APIError.self) { _ = try await Self.call(config) }
        #expect(missing?.kind == .authentication)
        #expect(missing?.description.contains("no private key is stored as 'jwt-client-key'") == true, "\(String(describing: missing))")

        // Not a key: the error names where it came from, never what it holds.
        let notAKey = "-----BEGIN PRIVATE KEY-----\nnot-a-key-7c41d2\n-----END PRIVATE KEY-----\n"
        let unusable = await #expect(throws: APIError.self) { _ = try await Self.call(config, variables: ["RESOURCEFUL_AUTH_JWT_CLIENT_KEY": notAKey]) }
        #expect(unusable?.kind == .authentication)
        let description = unusable.map { "\($0)" } ?? ""
        #expect(description.contains("the private key 'jwt-client-key' of the environment storage holds no RSA or P-256 private key"))
        let shown = description.contains("not-a-key-7c41d2")
        #expect(!shown, "the error shows the stored value")
    }

    @Test(arguments: [
        (#""privateKeyFile": "/k.pem", "privateKey": {"storage": "environment"}"#, "authentication.oauth2.privateKey.storage"),
        (#""privateKey": {"name": "k"}"#, "authentication.oauth2.privateKey.storage"),
        (#""privateKey": {"storage": "vault"}"#, "authentication.oauth2.privateKey.storage"),
    ])
    func aBadPrivateKeySettingIsNamed(oauth2: String, key: String) async throws {
        let config = try TestConfig { _ in
            #"{"baseURL": "https://api.example", "service": "s", "authentication": {"storages": ["oauth2"], "oauth2": {"clientId": "c", "issuer": "https://auth.example", \#(oauth2)}}}"#
        }
        defer { config.remove() }
        let error = await #expect(throws: APIError.self) { _ = try await config.dependencies() }
        #expect(error?.kind == .invalidConfiguration)
        #expect((error?.underlying as? APIConfigError)?.key == key)
    }
}
