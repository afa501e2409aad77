import Foundation
import HTTPTypes
import Resourceful
import ResourcefulKeyring
import ResourcefulOAuth2
import ResourcefulTesting
import Testing

/// The OAuth 2 client's credentials go only where the chosen file says: an environment variable
/// that moves an endpoint takes none of them, and a service on another origin than the top
/// level's inherits none of the top level's client credentials.
@Suite struct OAuth2SettingsTrustTests {
    /// The top level's client (`internal`, its secret in a file) on `api.example`, and `services`.
    static func config(services: String = "", client: String = #""clientSecret": {"storage": "file", "name": "internal-secret"}"#) throws -> TestConfig {
        try TestConfig(secrets: ["internal-secret": "SECRET-CS", "partner-secret": "SECRET-PS"]) { secrets in
            """
            {"baseURL": "https://api.example/v1", "service": "s",
             "authentication": {"storages": ["oauth2"], "file": {"directory": "\(secrets)"},
               "oauth2": {"clientId": "internal", "tokenEndpoint": "https://auth.internal.example/token", \(client)}},
             "services": {\(services)}}
            """
        }
    }

    static func dependencies(_ config: TestConfig, variables: [String: String] = [:], service: String? = nil) async throws -> APIDependencies {
        try await APIDependencies.live(
            environment: "x", configDirectory: config.directory.path, environmentVariables: variables,
            storageFactories: [OAuth2StorageFactory(), KeyringStorageFactory()], service: service
        )
    }

    /// The error making the dependencies throws, or `nil` when they are made.
    static func refusal(_ config: TestConfig, variables: [String: String] = [:], service: String? = nil) async -> APIConfigError? {
        do {
            let dependencies = try await dependencies(config, variables: variables, service: service)
            try? await dependencies.transport.shutdown()
            return nil
        } catch let error as APIError {
            #expect(error.kind == .invalidConfiguration)
            #expect(!"\(error)".contains("SECRET-"), "no secret in the error: \(error)")
            return error.underlying as? APIConfigError
        } catch {
            Issue.record("not an APIError: \(error)")
            return nil
        }
    }

    @Test(arguments: [
        ("RESOURCEFUL_AUTHENTICATION_OAUTH2_TOKEN_ENDPOINT", "authentication.oauth2.tokenEndpoint"),
        ("RESOURCEFUL_AUTHENTICATION_OAUTH2_ISSUER", "authentication.oauth2.issuer"),
        ("RESOURCEFUL_AUTHENTICATION_OAUTH2_DEVICE_AUTHORIZATION_ENDPOINT", "authentication.oauth2.deviceAuthorizationEndpoint"),
        ("RESOURCEFUL_AUTHENTICATION_OAUTH2_REVOCATION_ENDPOINT", "authentication.oauth2.revocationEndpoint"),
        ("RESOURCEFUL_AUTHENTICATION_OAUTH2_AUTHORIZATION_ENDPOINT", "authentication.oauth2.authorizationEndpoint"),
    ])
    func aVariableMovingAnEndpointTakesNoneOfTheFilesClientCredentials(variable: String, key: String) async throws {
        try await MockServer.withRunning { server in
            server.stub(.post, "/token", .json(raw: #"{"access_token": "a", "token_type": "Bearer", "expires_in": 60}"#))
            let config = try Self.config()
            defer { config.remove() }
            let error = await Self.refusal(config, variables: [variable: server.baseURL.absoluteString + "/token"])
            #expect(error?.kind == .movedByVariable)
            #expect(error?.key == key)
            #expect(error?.source == variable)
            #expect(error?.description.contains("127.0.0.1") == false, "the value is not repeated")
            #expect(server.requests.isEmpty, "nothing reached the variable's endpoint")
        }
    }

    @Test func aServicesVariableAndTheFilesOwnValueToo() async throws {
        let config = try Self.config(services: #""partner": {"timeout": 5}"#)
        defer { config.remove() }
        let error = await Self.refusal(
            config, variables: ["RESOURCEFUL_SERVICES_PARTNER_AUTHENTICATION_OAUTH2_TOKEN_ENDPOINT": "https://evil.example/token"], service: "partner"
        )
        #expect(error?.kind == .movedByVariable)
        #expect(error?.key == "services.partner.authentication.oauth2.tokenEndpoint")
        #expect(error?.source == "RESOURCEFUL_SERVICES_PARTNER_AUTHENTICATION_OAUTH2_TOKEN_ENDPOINT")
        // The file's own endpoint again changes nothing.
        #expect(await Self.refusal(config, variables: ["RESOURCEFUL_AUTHENTICATION_OAUTH2_TOKEN_ENDPOINT": "https://auth.internal.example/token"]) == nil)
    }

    @Test(arguments: [
        (#""clientSecret": {"storage": "file", "name": "internal-secret"}"#, "RESOURCEFUL_AUTHENTICATION_OAUTH2_CLIENT_SECRET_NAME", "partner-secret", "clientSecret.name"),
        (#""clientSecret": {"storage": "file", "name": "internal-secret"}"#, "RESOURCEFUL_AUTHENTICATION_OAUTH2_CLIENT_SECRET_STORAGE", "keyring", "clientSecret.storage"),
        (#""privateKey": {"storage": "file", "name": "internal-key"}"#, "RESOURCEFUL_AUTHENTICATION_OAUTH2_PRIVATE_KEY_NAME", "partner-secret", "privateKey.name"),
        (#""privateKey": {"storage": "file", "name": "internal-key"}"#, "RESOURCEFUL_AUTHENTICATION_OAUTH2_PRIVATE_KEY_STORAGE", "keyring", "privateKey.storage"),
        (#""privateKeyFile": "/run/keys/internal.pem""#, "RESOURCEFUL_AUTHENTICATION_OAUTH2_PRIVATE_KEY_FILE", "/run/keys/partner.pem", "privateKeyFile"),
        // The default names are made from the client ID: another one picks another client's.
        (#""clientSecret": {"storage": "file"}"#, "RESOURCEFUL_AUTHENTICATION_OAUTH2_CLIENT_ID", "partner", "clientId"),
        (#""privateKey": {"storage": "file"}"#, "RESOURCEFUL_AUTHENTICATION_OAUTH2_CLIENT_ID", "partner", "clientId"),
    ])
    func aVariablePickingAnotherStoredSecretOrKeyIsRefused(client: String, variable: String, value: String, key: String) async throws {
        let config = try Self.config(client: client)
        defer { config.remove() }
        let error = await Self.refusal(config, variables: [variable: value])
        #expect(error?.kind == .movedByVariable, "\(String(describing: error))")
        #expect(error?.key == "authentication.oauth2.\(key)")
        #expect(error?.source == variable)
        #expect(error?.description.contains(value) == false, "the value is not repeated")
        // The file's own value from the variable is no move.
        #expect(await Self.refusal(config, variables: ["RESOURCEFUL_AUTHENTICATION_OAUTH2_CLIENT_ID": "internal"])?.kind != .movedByVariable)
    }

    @Test(arguments: [
        ("RESOURCEFUL_AUTHENTICATION_OAUTH2_CLIENT_ID", "internal-v2", "clientId"),
        ("RESOURCEFUL_AUTHENTICATION_OAUTH2_SCOPES", "admin,billing:write", "scopes"),
        ("RESOURCEFUL_AUTHENTICATION_OAUTH2_RESOURCE", "https://billing.example", "resource"),
        ("RESOURCEFUL_AUTHENTICATION_OAUTH2_AUDIENCE", "billing", "audience"),
    ])
    func aVariableChangingWhoTheClientIsOrWhatItsTokenMayDoIsRefused(variable: String, value: String, key: String) async throws {
        // The file names the secret: another client ID would still send it, under another name.
        let config = try Self.config()
        defer { config.remove() }
        let error = await Self.refusal(config, variables: [variable: value])
        #expect(error?.kind == .movedByVariable && error?.key == "authentication.oauth2.\(key)", "\(String(describing: error))")
    }

    @Test(arguments: [("RESOURCEFUL_SERVICE", "partner-api", "service"), ("RESOURCEFUL_SERVICES_PARTNER_SERVICE", "s", "services.partner.service")])
    func aVariablePickingAnotherServicesRefreshTokenIsRefused(variable: String, value: String, key: String) async throws {
        let config = try Self.config(services: #""partner": {"service": "partner-api", "timeout": 5}"#)
        defer { config.remove() }
        let error = await Self.refusal(config, variables: [variable: value], service: key.hasPrefix("services.") ? "partner" : nil)
        #expect(error?.kind == .movedByVariable, "\(String(describing: error))")
        #expect(error?.key == key)
        #expect(error?.source == variable)
    }

    @Test func aTopLevelClientIDVariableCannotMakeAServicesClientTheTopLevels() async throws {
        let config = try Self.config(services: #""partner": {"service": "partner-api", "authentication": {"oauth2": {"clientId": "partner"}}}"#)
        defer { config.remove() }
        // Without the variable the service names another client and must name its secret.
        let plain = await Self.refusal(config, service: "partner")
        #expect(plain?.key?.hasSuffix("clientSecret.name") == true, "\(String(describing: plain))")
        let error = await Self.refusal(config, variables: ["RESOURCEFUL_AUTHENTICATION_OAUTH2_CLIENT_ID": "partner"], service: "partner")
        #expect(error?.key?.hasSuffix("clientSecret.name") == true, "the top level's secret would go out as the partner client's: \(String(describing: error))")
    }

    @Test func aServiceOnAnotherOriginDoesNotInheritTheTopLevelsClientSecret() async throws {
        let config = try Self.config(services: #""partner": {"baseURL": "https://partner.example/v1", "service": "partner-api"}"#)
        defer { config.remove() }
        let error = await Self.refusal(config, service: "partner")
        #expect(error?.key == "authentication.oauth2.clientSecret.name")
        #expect(error?.description.contains("another origin") == true)
        // Nor does a variable that names the top level's secret under the service's name: it is
        // not the service's own.
        for (variable, value) in [
            ("RESOURCEFUL_SERVICES_PARTNER_AUTHENTICATION_OAUTH2_CLIENT_SECRET_NAME", "internal-secret"),
            ("RESOURCEFUL_SERVICES_PARTNER_AUTHENTICATION_OAUTH2_CLIENT_SECRET_STORAGE", "file"),
        ] {
            let repeated = await Self.refusal(config, variables: [variable: value], service: "partner")
            #expect(repeated?.key == "services.partner.authentication.oauth2.clientSecret.name" || repeated?.key == "authentication.oauth2.clientSecret.name", "\(variable): \(String(describing: repeated))")
        }
        // A variable that moves the service there takes none of the file's credentials at all.
        let same = try Self.config(services: #""partner": {"service": "partner-api", "timeout": 5}"#)
        defer { same.remove() }
        let moved = try await APIConfig.load(
            environment: "x", configDirectory: same.directory.path,
            environmentVariables: ["RESOURCEFUL_SERVICES_PARTNER_BASE_URL": "https://partner.example/v1"], service: "partner"
        )
        #expect(moved.authentication.storages.isEmpty)
    }

    @Test func aServiceOnAnotherOriginDoesNotInheritTheTopLevelsPrivateKey() async throws {
        for client in [#""privateKey": {"storage": "environment"}"#, #""privateKeyFile": "/run/keys/internal.pem""#] {
            let config = try Self.config(services: #""partner": {"baseURL": "https://partner.example/v1", "service": "partner-api"}"#, client: client)
            defer { config.remove() }
            let error = await Self.refusal(config, service: "partner")
            #expect(error?.key == "authentication.oauth2.privateKey.name" || error?.key == "authentication.oauth2.privateKeyFile", "\(client)")
            #expect(error?.description.contains("another origin") == true, "\(client)")
        }
    }

    @Test func aServiceOnAnotherOriginNamingItsOwnSecretOrOnTheSameOriginIsTaken() async throws {
        let own = try Self.config(
            services: #""partner": {"baseURL": "https://partner.example/v1", "service": "partner-api", "authentication": {"oauth2": {"clientSecret": {"name": "partner-secret"}}}}"#
        )
        defer { own.remove() }
        #expect(await Self.refusal(own, service: "partner") == nil)
        let path = try Self.config(services: #""reports": {"baseURL": "https://api.example/reports"}"#)
        defer { path.remove() }
        #expect(await Self.refusal(path, service: "reports") == nil)
    }
}
