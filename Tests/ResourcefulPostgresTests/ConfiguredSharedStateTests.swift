import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulOAuth2
@testable import ResourcefulPostgres
import ResourcefulTesting
import Testing

/// `sharedState.kind: postgres` in a configuration file: the live dependencies make the fleet's
/// state, an API made from them keeps its limits there, OAuth 2 shares its tokens there, and the
/// API's shutdown ends the store's connections.
@Suite(.postgres)
struct ConfiguredSharedStateTests {
    /// A configuration folder with `x.json` and a folder of secret files.
    struct Config {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shared-config-\(UUID().uuidString)")
        var secrets: String { directory.appendingPathComponent("secrets").path }

        /// `x.json` made by `json` from the secrets' folder, and the secret files `secrets`.
        init(secrets: [String: String], _ json: (_ secrets: String) -> String) throws {
            try FileManager.default.createDirectory(atPath: directory.appendingPathComponent("secrets").path, withIntermediateDirectories: true)
            for (name, value) in secrets { try Data((value + "\n").utf8).write(to: directory.appendingPathComponent("secrets/\(name)")) }
            try Data(json(self.secrets).utf8).write(to: directory.appendingPathComponent("x.json"))
        }

        func dependencies(
            variables: [String: String] = [:], sharedStateFactories: [any SharedStateFactory] = [PostgresSharedStateFactory()]
        ) async throws -> APIDependencies {
            try await APIDependencies.live(
                environment: "x", configDirectory: directory.path, environmentVariables: variables,
                storageFactories: [OAuth2StorageFactory()], sharedStateFactories: sharedStateFactories)
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    /// The `sharedState.postgres` members that reach the suite's server as `role` in `database`,
    /// the password in the file `pg-password`, and `extra`; a statement may take 10 s (the tests
    /// check what the store keeps, not how fast a loaded machine answers).
    static func postgres(_ role: Role, database: String, _ extra: String = "") throws -> String {
        let server = try suiteServer()
        return """
            {"host": "127.0.0.1", "port": \(server.port), "database": "\(database)", "username": "\(role.name)", "tls": "disable",
             "statementTimeout": 10,
             "password": {"storage": "file", "name": "pg-password"}\(extra.isEmpty ? "" : ", " + extra)}
            """
    }

    @Test("An API from a configuration naming postgres keeps its budgets in the store; its shutdown ends the store's connections")
    func aConfiguredStoreIsUsedAndEnded() async throws {
        let database = try await makeDatabase("configured")
        let role = try await Role.make("fleet", creatingIn: database)
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/ticks", .json(raw: #"{"n": 1}"#))
            let config = try Config(secrets: ["pg-password": role.password]) { secrets in
                """
                {"baseURL": "\(server.baseURL.absoluteString)/v1", "service": "ticks", "limits": {"rate": {"requestsPerSecond": 100, "burst": 10}},
                 "authentication": {"file": {"directory": "\(secrets)"}},
                 "sharedState": {"kind": "postgres", "postgres": \(try! Self.postgres(role, database: database))}}
                """
            }
            defer { config.remove() }
            let api = API(dependencies: try await config.dependencies())
            _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "ticks"))
            #expect(try await rows("SELECT count(*)::text FROM resourceful.rate_limits", database: database) == ["1"])
            let connections = "SELECT count(*)::text FROM pg_stat_activity WHERE usename = '\(role.name)'"
            #expect(try await rows(connections) != ["0"])
            try await api.shutdown()
            let deadline = ContinuousClock.now + .seconds(60)
            while try await rows(connections) != ["0"], ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
            #expect(try await rows(connections) == ["0"])
        }
    }

    @Test("budgetsWhenUnavailable: fail fails a budgeted call, unsent, while the configured store cannot be reached; useMemory sends it")
    func aConfiguredBudgetFailsWithoutItsStore() async throws {
        // A port nothing listens on: the store is unavailable from the first statement.
        let closed = try Nginx.freePort()
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/ticks", .json(raw: #"{"n": 1}"#))
            for (choice, fails) in [("fail", true), ("useMemory", false)] {
                let config = try Config(secrets: [:]) { _ in
                    """
                    {"baseURL": "\(server.baseURL.absoluteString)/v1", "service": "ticks", "limits": {"rate": {"requestsPerSecond": 100, "burst": 10}},
                     "sharedState": {"kind": "postgres", "postgres": {"host": "127.0.0.1", "port": \(closed), "database": "d", "username": "u",
                       "tls": "disable", "statementTimeout": 0.2, "budgetsWhenUnavailable": "\(choice)"}}}
                    """
                }
                defer { config.remove() }
                let api = API(dependencies: try await config.dependencies())
                let before = server.requests.count
                if fails {
                    let error = await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "ticks")) }
                    #expect(error?.kind == .sharedStateUnavailable, "\(String(describing: error))")
                    #expect(server.requests.count == before)
                } else {
                    _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "ticks"))
                    #expect(server.requests.count == before + 1)
                }
                try await api.shutdown()
            }
        }
    }

    @Test("Two instances configured alike ask the token endpoint once, and keep the token sealed")
    func configuredInstancesShareTheirToken() async throws {
        let database = try await makeDatabase("tokens")
        let role = try await Role.make("fleet", creatingIn: database)
        let sealingKey = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        try await MockServer.withRunning { server in
            server.route(.post, "/token") { _ in .json(raw: #"{"access_token": "shared-tok-7c1", "token_type": "Bearer", "expires_in": 3600}"#) }
            server.route(.get, "/v1/me") { _ in .json(raw: "{}") }
            let config = try Config(secrets: ["pg-password": role.password, "client-secret": "client-secret-9d4", "key-2026": sealingKey]) { secrets in
                """
                {"baseURL": "\(server.baseURL.absoluteString)/v1", "service": "me",
                 "authentication": {"storages": ["oauth2"], "file": {"directory": "\(secrets)"},
                   "oauth2": {"clientId": "c", "tokenEndpoint": "\(server.baseURL.absoluteString)/token", "grant": "client_credentials",
                     "clientAuthentication": "client_secret_post", "clientSecret": {"storage": "file", "name": "client-secret"}}},
                 "sharedState": {"kind": "postgres",
                   "postgres": \(try! Self.postgres(role, database: database, #""sealingKey": {"storage": "file", "name": "key-2026"}"#))}}
                """
            }
            defer { config.remove() }
            let first = API(dependencies: try await config.dependencies())
            let second = API(dependencies: try await config.dependencies())
            _ = try await first.call(AdHocRequest<Empty, Empty>(.show, "me"))
            _ = try await second.call(AdHocRequest<Empty, Empty>(.show, "me"))
            try await first.shutdown()
            try await second.shutdown()
            #expect(server.requests.filter { $0.path == "/token" }.count == 1)
            #expect(server.requests.filter { $0.path == "/v1/me" }.count == 2)
            let kept = try await rows("SELECT encode(sealed, 'escape') || key_id FROM resourceful.tokens", database: database)
            #expect(kept.count == 1)
            #expect(!kept.joined().contains("shared-tok-7c1"))
            #expect(kept.first?.hasSuffix("key-2026") == true)
        }
    }

    @Test("refreshTokenStorage sharedState: the fleet's refresh token is spent, and its successor kept in its place")
    func configuredRefreshTokensAreTheFleets() async throws {
        let database = try await makeDatabase("refresh")
        let role = try await Role.make("fleet", creatingIn: database)
        let sealingKey = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        try await MockServer.withRunning { server in
            let spent = Locked<[String]>([])
            server.route(.post, "/token") { request in
                let fields = URLComponents(string: "?" + String(decoding: request.body, as: UTF8.self))?.queryItems ?? []
                spent.withLock { $0.append(fields.first { $0.name == "refresh_token" }?.value ?? "none") }
                return .json(raw: #"{"access_token": "acc-1", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "rt-next-4b2"}"#)
            }
            server.route(.get, "/v1/me") { _ in .json(raw: "{}") }
            let config = try Config(secrets: ["pg-password": role.password, "key-2026": sealingKey]) { secrets in
                """
                {"baseURL": "\(server.baseURL.absoluteString)/v1", "service": "me",
                 "authentication": {"storages": ["oauth2"], "file": {"directory": "\(secrets)"},
                   "oauth2": {"clientId": "c", "tokenEndpoint": "\(server.baseURL.absoluteString)/token", "grant": "refresh_token",
                     "clientAuthentication": "none", "refreshTokenStorage": "sharedState"}},
                 "sharedState": {"kind": "postgres",
                   "postgres": \(try! Self.postgres(role, database: database, #""sealingKey": {"storage": "file", "name": "key-2026"}"#))}}
                """
            }
            defer { config.remove() }
            let dependencies = try await config.dependencies()
            let refreshTokens = try #require(dependencies.sharedState?.refreshTokens)
            // Kept under the server's and client's scope.
            let name = OAuth2AuthenticationStorage.sharedRefreshTokenName(
                service: "me", settings: OAuth2Settings(clientID: "c", tokenEndpoint: server.baseURL.appendingPathComponent("token")))
            try await refreshTokens.storeSecret("rt-first-8e3", named: name)
            let api = API(dependencies: dependencies)
            _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "me"))
            #expect(spent.withLock { $0 } == ["rt-first-8e3"])
            #expect(try await refreshTokens.secret(named: name) == "rt-next-4b2")
            try await api.shutdown()
        }
    }

    @Test("A service naming a database of its own does not get the top level's password or sealing key")
    func aServiceOnAnotherDatabaseNamesItsOwnCredentials() async throws {
        let config = try Config(secrets: ["pg": "pg-password-5e0"]) { secrets in
            """
            {"baseURL": "https://api.example", "service": "s", "authentication": {"file": {"directory": "\(secrets)"}},
             "sharedState": {"kind": "postgres", "postgres": {"host": "127.0.0.1", "database": "d", "username": "u", "tls": "disable",
               "password": {"storage": "file", "name": "pg"}}},
             "services": {"b": {"service": "b", "sharedState": {"postgres": {"host": "db-b.partner.example"}}}}}
            """
        }
        defer { config.remove() }
        let error = await #expect(throws: APIError.self) {
            _ = try await APIDependencies.live(
                environment: "x", configDirectory: config.directory.path, environmentVariables: [:],
                sharedStateFactories: [PostgresSharedStateFactory()], service: "b")
        }
        #expect((error?.underlying as? APIConfigError)?.key == "sharedState.postgres.password.storage", "\(String(describing: error))")
        #expect(!String(describing: error).contains("pg-password-5e0"))
    }

    @Test(arguments: [("127.0.0.1", true), ("127.9.8.7", true), ("localhost", true), ("::1", true), ("[::1]", true),
        ("127.evil.example", false), ("127.0.0.1.evil.example", false), ("localhost.evil.example", false), ("10.0.0.1", false), ("db.example", false)])
    func onlyThisMachinesAddressesAreLoopback(_ host: String, _ loopback: Bool) {
        #expect(PostgresConnectionSettings.isLoopback(host) == loopback)
    }

    struct Refused: CustomTestStringConvertible, Sendable {
        var name: String
        var sharedState: String
        var key: String
        var variables: [String: String] = [:]
        var factories = true
        var testDescription: String { name }
    }

    static let refused: [Refused] = [
        Refused(
            name: "a kind no factory was given for", sharedState: #"{"kind": "postgres", "postgres": {"host": "127.0.0.1", "database": "d", "username": "u"}}"#,
            key: "sharedState.kind", factories: false),
        Refused(name: "a kind's name that is not one", sharedState: #"{"kind": "post gres"}"#, key: "sharedState.kind"),
        Refused(name: "no host", sharedState: #"{"kind": "postgres", "postgres": {"database": "d", "username": "u"}}"#, key: "sharedState.postgres.host"),
        Refused(
            name: "a host moved by a variable",
            sharedState: #"{"kind": "postgres", "postgres": {"host": "127.0.0.1", "database": "d", "username": "u", "tls": "disable"}}"#,
            key: "sharedState.postgres.host", variables: ["RESOURCEFUL_SHARED_STATE_POSTGRES_HOST": "db.attacker.example"]),
        Refused(
            name: "a password's name moved by a variable",
            sharedState: #"{"kind": "postgres", "postgres": {"host": "127.0.0.1", "database": "d", "username": "u", "password": {"storage": "file", "name": "pg"}}}"#,
            key: "sharedState.postgres.password.name", variables: ["RESOURCEFUL_SHARED_STATE_POSTGRES_PASSWORD_NAME": "other"]),
        Refused(
            name: "TLS off for another machine", sharedState: #"{"kind": "postgres", "postgres": {"host": "db.example", "database": "d", "username": "u", "tls": "disable"}}"#,
            key: "sharedState.postgres.tls"),
        Refused(
            name: "TLS off for a name that begins like a loopback address",
            sharedState: #"{"kind": "postgres", "postgres": {"host": "127.0.0.1.attacker.example", "database": "d", "username": "u", "tls": "disable"}}"#,
            key: "sharedState.postgres.tls"),
        Refused(
            name: "a password that is not there",
            sharedState: #"{"kind": "postgres", "postgres": {"host": "127.0.0.1", "database": "d", "username": "u", "password": {"storage": "file", "name": "missing"}}}"#,
            key: "sharedState.postgres.password.name"),
        Refused(
            name: "a password without its storage",
            sharedState: #"{"kind": "postgres", "postgres": {"host": "127.0.0.1", "database": "d", "username": "u", "password": {"name": "pg"}}}"#,
            key: "sharedState.postgres.password.storage"),
        Refused(
            name: "a sealing key that is no key",
            sharedState: #"{"kind": "postgres", "postgres": {"host": "127.0.0.1", "database": "d", "username": "u", "sealingKey": {"storage": "file", "name": "not-a-key"}}}"#,
            key: "sharedState.postgres.sealingKey.name"),
        Refused(
            name: "tokens shared without a key",
            sharedState: #"{"kind": "postgres", "postgres": {"host": "127.0.0.1", "database": "d", "username": "u", "tokens": true}}"#,
            key: "sharedState.postgres.tokens"),
        Refused(
            name: "the fleet's refresh tokens without a key to seal them",
            sharedState: #"{"kind": "postgres", "postgres": {"host": "127.0.0.1", "database": "d", "username": "u", "tls": "disable"}}"#,
            key: "authentication.oauth2.refreshTokenStorage"),
        Refused(
            name: "a choice for budgets that is not one",
            sharedState: #"{"kind": "postgres", "postgres": {"host": "127.0.0.1", "database": "d", "username": "u", "budgetsWhenUnavailable": "sometimes"}}"#,
            key: "sharedState.postgres.budgetsWhenUnavailable"),
        Refused(
            name: "a token lease of no time",
            sharedState: #"{"kind": "postgres", "postgres": {"host": "127.0.0.1", "database": "d", "username": "u", "tokenLease": 0}}"#,
            key: "sharedState.postgres.tokenLease"),
        Refused(
            name: "a mistyped key", sharedState: #"{"kind": "postgres", "postgres": {"hots": "127.0.0.1"}}"#, key: "sharedState.postgres.hots"),
    ]

    @Test(arguments: refused)
    func aBadSettingIsNamedAndNothingIsLeftRunning(_ bad: Refused) async throws {
        let oauth2 =
            bad.key.hasPrefix("authentication.oauth2")
            ? #", "storages": ["oauth2"], "oauth2": {"clientId": "c", "tokenEndpoint": "https://auth.example/token", "refreshTokenStorage": "sharedState"}"#
            : ""
        let config = try Config(secrets: ["pg": "pg-password-5e0", "not-a-key": "secret-sealing-text-31a"]) { secrets in
            #"{"baseURL": "https://api.example", "service": "s", "authentication": {"file": {"directory": "\#(secrets)"}\#(oauth2)}, "sharedState": \#(bad.sharedState)}"#
        }
        defer { config.remove() }
        let error = await #expect(throws: APIError.self) {
            _ = try await config.dependencies(variables: bad.variables, sharedStateFactories: bad.factories ? [PostgresSharedStateFactory()] : [])
        }
        #expect(error?.kind == .invalidConfiguration)
        let said = (error?.underlying as? APIConfigError).map { $0.key } ?? String(describing: error)
        #expect(said == bad.key, "\(String(describing: error))")
        // No secret in what is said.
        for secret in ["pg-password-5e0", "secret-sealing-text-31a"] { #expect(!String(describing: error).contains(secret)) }
        if !bad.factories {
            let detail = "\(String(describing: error?.underlying))"
            #expect(detail.contains("PostgresSharedStateFactory"))
        }
    }
}
