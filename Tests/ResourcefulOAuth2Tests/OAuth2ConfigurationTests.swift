import Foundation
import HTTPTypes
import Resourceful
import ResourcefulKeyring
import ResourcefulOAuth2
import ResourcefulTesting
import Testing

/// The `authentication.oauth2` keys, read and checked by the OAuth 2 settings themselves.
@Suite struct OAuth2ConfigurationTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var oauth2: String
        var key: String
        var testDescription: String { key }
    }

    static let refused: [Case] = [
        Case(oauth2: #""issuer": "https://auth.example""#, key: "authentication.oauth2.clientId"),
        Case(oauth2: #""clientId": "c""#, key: "authentication.oauth2.issuer"),
        Case(oauth2: #""clientId": "c", "tokenEndpoint": "http://auth.example/token""#, key: "authentication.oauth2.tokenEndpoint"),
        Case(oauth2: #""clientId": "c", "issuer": "http://10.0.0.1""#, key: "authentication.oauth2.issuer"),
        Case(oauth2: #""clientId": "c", "issuer": "ftp://auth.example""#, key: "authentication.oauth2.issuer"),
        Case(oauth2: #""clientId": "c", "issuer": "https://auth.example", "clientAuthentication": "client_secret_basic""#, key: "authentication.oauth2.clientSecret.storage"),
        Case(oauth2: #""clientId": "c", "issuer": "https://auth.example", "clientAuthentication": "private_key_jwt""#, key: "authentication.oauth2.privateKeyFile"),
        Case(oauth2: #""clientId": "c", "issuer": "https://auth.example", "clientAuthentication": "tls_client_auth""#, key: "authentication.oauth2.clientAuthentication"),
        Case(oauth2: #""clientId": "c", "issuer": "https://auth.example", "scopes": ["read write"]"#, key: "authentication.oauth2.scopes"),
        Case(oauth2: #""clientId": "c", "issuer": "https://auth.example", "skew": -1"#, key: "authentication.oauth2.skew"),
        Case(oauth2: #""clientId": "c", "issuer": "https://auth.example", "refusalBackoff": -1"#, key: "authentication.oauth2.refusalBackoff"),
        Case(oauth2: #""clientId": "c", "issuer": "https://auth.example", "clientSecret": {"storage": "vault"}"#, key: "authentication.oauth2.clientSecret.storage"),
        Case(oauth2: #""clientId": "c", "issuer": "https://auth.example", "privateKeyFile": "/nonexistent/key.pem""#, key: "authentication.oauth2.privateKeyFile"),
    ]

    @Test(arguments: refused)
    func aBadKeyIsNamed(_ bad: Case) async throws {
        let config = try TestConfig { _ in
            #"{"baseURL": "https://api.example", "service": "s", "authentication": {"storages": ["oauth2"], "oauth2": {\#(bad.oauth2)}}}"#
        }
        defer { config.remove() }
        let error = await #expect(throws: APIError.self) { _ = try await config.dependencies() }
        #expect(error?.kind == .invalidConfiguration)
        #expect((error?.underlying as? APIConfigError)?.key == bad.key)
    }

    @Test(arguments: ["http://127.0.0.1:9/token", "http://[::1]:9/token", "https://auth.example/token", "https://localhost:9/token"])
    func loopbackAndHTTPSEndpointsAreAccepted(_ endpoint: String) async throws {
        let config = try TestConfig { _ in
            #"{"baseURL": "https://api.example", "service": "s", "authentication": {"storages": ["oauth2"], "oauth2": {"clientId": "c", "tokenEndpoint": "\#(endpoint)"}}}"#
        }
        defer { config.remove() }
        let dependencies = try await config.dependencies()
        try await dependencies.transport.shutdown()
        let chain = try #require(dependencies.authenticationStorage as? ChainedAuthenticationStorage)
        let storage = try #require(chain.links.first?.storage as? OAuth2AuthenticationStorage)
        #expect(storage.settings.tokenEndpoint?.absoluteString == endpoint)
        #expect(storage.settings.clientAuthentication == OAuth2Settings.ClientAuthentication.none)
        #expect(storage.settings.grant == .refreshToken)
    }

    @Test func aServiceHasAClientOfItsOwn() async throws {
        let config = try TestConfig { _ in
            """
            {"baseURL": "https://api.example", "service": "s",
             "authentication": {"storages": ["oauth2"], "oauth2": {"clientId": "top", "issuer": "https://auth.example", "scopes": ["read"]}},
             "services": {"billing": {"service": "billing-api", "authentication": {"oauth2": {"clientId": "billing-client"}}}}}
            """
        }
        defer { config.remove() }
        let dependencies = try await APIDependencies.live(
            environment: "x", configDirectory: config.directory.path, environmentVariables: [:],
            storageFactories: [OAuth2StorageFactory(), KeyringStorageFactory()], service: "billing"
        )
        try await dependencies.transport.shutdown()
        let chain = try #require(dependencies.authenticationStorage as? ChainedAuthenticationStorage)
        let storage = try #require(chain.links.first?.storage as? OAuth2AuthenticationStorage)
        #expect(storage.settings.clientID == "billing-client")
        #expect(storage.settings.scopes == ["read"])
        #expect(storage.settings.issuer?.absoluteString == "https://auth.example")
    }

    @Test func metadataNamingAnotherIssuerIsRefused() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.get, "/.well-known/oauth-authorization-server", .json(raw: #"{"issuer": "https://evil.example", "token_endpoint": "https://evil.example/token"}"#))
            let storage = try await OAuth2AuthenticationStorage(
                settings: OAuth2Settings(clientID: "c", issuer: server.baseURL, clientAuthentication: .none), transport: transport
            )
            let error = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: "s") }
            #expect(error?.kind == .invalidResponse)
            #expect(error?.description.contains("another issuer") == true)
            #expect(!server.requests.contains { $0.method == .post })
        }
    }

    @Test func metadataIsFoundThroughOpenIDDiscoveryWhenRFC8414HasNone() async throws {
        try await MockServer.withTransport { server, transport in
            let issuer = server.baseURL.appendingPathComponent("realms/main").absoluteString
            server.stub(.get, "/realms/main/.well-known/openid-configuration", .json(raw: #"{"issuer": "\#(issuer)", "token_endpoint": "\#(issuer)/token"}"#))
            server.stub(.post, "/realms/main/token", .json(raw: #"{"access_token": "found-1", "token_type": "Bearer"}"#))
            let storage = try await OAuth2AuthenticationStorage(
                settings: OAuth2Settings(clientID: "c", issuer: URL(string: issuer), clientAuthentication: .none, grant: .clientCredentials),
                transport: transport
            )
            #expect(try await storage.authenticationHeader(for: "s") == "Bearer found-1")
            #expect(server.requests.map(\.path) == [
                "/.well-known/oauth-authorization-server/realms/main", "/realms/main/.well-known/openid-configuration", "/realms/main/token",
            ])
        }
    }
}

/// A service under `services` with an OAuth 2 client or server of its own.
@Suite struct ServiceClientSecretTests {
    static func config(_ service: String, client: String = #""clientSecret": {"storage": "file", "name": "internal-secret"}"#) throws -> TestConfig {
        try TestConfig { secrets in
            """
            {"baseURL": "https://api.example", "service": "s",
             "authentication": {"storages": ["oauth2"], "file": {"directory": "\(secrets)"},
               "oauth2": {"clientId": "internal", "tokenEndpoint": "https://auth.internal.example/token", \(client)}},
             "services": {"partner": {"service": "partner-api", "authentication": {"oauth2": {\(service)}}}}}
            """
        }
    }

    static func dependencies(_ config: TestConfig) async throws -> APIDependencies {
        try await APIDependencies.live(
            environment: "x", configDirectory: config.directory.path, environmentVariables: [:],
            storageFactories: [OAuth2StorageFactory(), KeyringStorageFactory()], service: "partner"
        )
    }

    @Test(arguments: [
        #""clientId": "partner-client", "tokenEndpoint": "https://auth.partner.example/token""#,
        #""tokenEndpoint": "https://auth.partner.example/token""#,
        #""clientId": "partner-client""#,
    ])
    func doesNotInheritTheTopLevelsClientSecret(_ service: String) async throws {
        let config = try Self.config(service)
        defer { config.remove() }
        let error = await #expect(throws: APIError.self) { _ = try await Self.dependencies(config) }
        #expect(error?.kind == .invalidConfiguration)
        #expect((error?.underlying as? APIConfigError)?.key == "authentication.oauth2.clientSecret.name")
    }

    @Test func doesNotSendTheTopLevelsSecretOfTheDefaultNameToItsOwnServer() async throws {
        let config = try Self.config(#""tokenEndpoint": "https://auth.partner.example/token""#, client: #""clientSecret": {"storage": "file"}"#)
        defer { config.remove() }
        let error = await #expect(throws: APIError.self) { _ = try await Self.dependencies(config) }
        #expect((error?.underlying as? APIConfigError)?.key == "authentication.oauth2.clientSecret.name")
    }

    @Test(arguments: [#""clientId": "partner-client""#, #""issuer": "https://auth.partner.example""#])
    func doesNotInheritTheTopLevelsPrivateKey(_ service: String) async throws {
        for client in [#""privateKeyFile": "/run/keys/internal.pem""#, #""privateKey": {"storage": "file", "name": "internal-key"}"#] {
            let config = try Self.config(service, client: client)
            defer { config.remove() }
            let error = await #expect(throws: APIError.self) { _ = try await Self.dependencies(config) }
            let key = (error?.underlying as? APIConfigError)?.key
            #expect(key == "authentication.oauth2.privateKeyFile" || key == "authentication.oauth2.privateKey.name", "\(client)")
        }
    }

    @Test func itsOwnPrivateKeyStorageWinsOverTheTopLevelsFile() async throws {
        let config = try Self.config(#""privateKey": {"storage": "environment"}"#, client: #""privateKeyFile": "/run/keys/internal.pem""#)
        defer { config.remove() }
        let dependencies = try await Self.dependencies(config)
        try await dependencies.transport.shutdown()
        let chain = try #require(dependencies.authenticationStorage as? ChainedAuthenticationStorage)
        let storage = try #require(chain.links.first?.storage as? OAuth2AuthenticationStorage)
        #expect(storage.settings.privateKeyFile == nil)
        #expect(storage.settings.privateKeyStorage == "environment")
        #expect(storage.settings.clientAuthentication == .privateKeyJWT)
    }

    @Test func namesItsOwnClientSecret() async throws {
        let config = try Self.config(
            #""clientId": "partner-client", "tokenEndpoint": "https://auth.partner.example/token", "clientSecret": {"name": "partner-secret"}"#
        )
        defer { config.remove() }
        let dependencies = try await Self.dependencies(config)
        try await dependencies.transport.shutdown()
        let chain = try #require(dependencies.authenticationStorage as? ChainedAuthenticationStorage)
        let storage = try #require(chain.links.first?.storage as? OAuth2AuthenticationStorage)
        #expect(storage.settings.clientSecretName == "partner-secret")
        #expect(storage.settings.clientSecretStorage == "file")
    }

    @Test func sharesTheTopLevelsClientWhenItKeepsIt() async throws {
        let config = try Self.config(#""scopes": ["partner.read"]"#)
        defer { config.remove() }
        let dependencies = try await Self.dependencies(config)
        try await dependencies.transport.shutdown()
        let chain = try #require(dependencies.authenticationStorage as? ChainedAuthenticationStorage)
        let storage = try #require(chain.links.first?.storage as? OAuth2AuthenticationStorage)
        #expect(storage.settings.clientSecretName == "internal-secret")
    }
}
