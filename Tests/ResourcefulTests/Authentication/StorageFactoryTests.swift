import Foundation
import HTTPTypes
import NIOCore
import Resourceful
import ResourcefulTesting
import Testing

/// Storage kinds come from factories: a user's own kind is named in `authentication.storages`,
/// reads its own keys (a service's override included), and asks for secrets and requests the way
/// the package's own kinds do.
@Suite struct StorageFactoryTests {
    /// `vault`: reads `authentication.vault.address` and fetches the token from there through the
    /// API's transport.
    struct VaultFactory: AuthenticationStorageFactory {
        let kind: APIConfig.StorageKind = "vault"
        func makeStorage(_ context: AuthenticationStorageContext) async throws(APIError) -> any AuthenticationStorage {
            guard let address = try context.keys.url("address") else {
                throw context.keys.invalid("address", expected: "the vault's URL")
            }
            let path = try context.keys.nonEmptyString("path") ?? "kv"
            return VaultStorage(address: address.absoluteString + "/" + path, transport: context.transport)
        }
    }

    struct VaultStorage: AuthenticationStorage {
        let address: String
        let transport: any HTTPTransport
        func authenticationHeader(for service: String) async throws -> String? {
            let request = TransportRequest(method: .get, url: "\(address)/\(service)", deadline: .now + .seconds(30), maxResponseBytes: 1024)
            let response = try await transport.send(request)
            let body = try await response.body.collect(upTo: 1024)
            return "Bearer " + String(buffer: body)
        }
    }

    /// A configuration directory with `x.json` holding `json`.
    struct Configs {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("factory-\(UUID().uuidString)")
        init(_ json: String) throws {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(json.utf8).write(to: directory.appendingPathComponent("x.json"))
        }
        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    @Test func aUsersKindReadsItsKeysAndSendsThroughTheAPIsTransport() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/vault/kv/example-api", .json(raw: "vault-token-5c1"))
            server.stub(.get, "/vault/secrets/billing-api", .json(raw: "billing-token-77e"))
            server.stub(.get, "/v1/me", .json(raw: "{}"))
            server.stub(.get, "/v2/me", .json(raw: "{}"))
            let configs = try Configs("""
                {"baseURL": "\(server.baseURL)/v1", "service": "example-api",
                 "authentication": {"storages": ["vault"], "vault": {"address": "\(server.baseURL)/vault"}},
                 "services": {"billing": {"baseURL": "\(server.baseURL)/v2", "service": "billing-api",
                   "authentication": {"vault": {"path": "secrets"}}}}}
                """)
            defer { configs.remove() }
            for (service, path, token) in [(nil, "/v1/me", "vault-token-5c1"), ("billing", "/v2/me", "billing-token-77e")] {
                let dependencies = try await APIDependencies.live(
                    environment: "x", configDirectory: configs.directory.path, environmentVariables: [:],
                    storageFactories: [VaultFactory()], service: service
                )
                let api = API(dependencies: dependencies)
                _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "me"))
                try await api.shutdown()
                let sent = server.requests.last { $0.path == path }
                #expect(sent?.headerFields[.authorization] == "Bearer \(token)")
            }
        }
    }

    @Test func aBadValueOfAUsersKindNamesItsFullKey() async throws {
        let configs = try Configs("""
            {"baseURL": "https://a.example", "service": "s", "authentication": {"storages": ["vault"]},
             "services": {"billing": {"authentication": {"vault": {"address": "not a url"}}}}}
            """)
        defer { configs.remove() }
        let error = await expectConfigError {
            _ = try await APIDependencies.live(
                environment: "x", configDirectory: configs.directory.path, environmentVariables: [:],
                storageFactories: [VaultFactory()], service: "billing"
            )
        }
        #expect(error?.key == "services.billing.authentication.vault.address")
        #expect(error?.description.contains("not a url") == false)
    }

    @Test func aRequiredKindNoFactoryMakesIsRefusedAndAnOptionalOneIsPassedOver() async throws {
        let required = try Configs(#"{"baseURL": "https://a.example", "service": "s", "authentication": {"storages": ["vault", "environment"]}}"#)
        defer { required.remove() }
        let error = await expectConfigError {
            _ = try await APIDependencies.live(environment: "x", configDirectory: required.directory.path, environmentVariables: [:])
        }
        #expect(error?.key == "authentication.storages")
        #expect(error?.expected?.contains("environment, file") == true)

        let optional = try Configs("""
            {"baseURL": "https://a.example", "service": "s",
             "authentication": {"storages": ["vault", "environment"], "optional": ["vault"]}}
            """)
        defer { optional.remove() }
        let dependencies = try await APIDependencies.live(
            environment: "x", configDirectory: optional.directory.path, environmentVariables: ["RESOURCEFUL_AUTH_S_TOKEN": "env-token"]
        )
        #expect(try await dependencies.authenticationStorage.authenticationHeader(for: "s") == "Bearer env-token")
        try await dependencies.transport.shutdown()
    }

    @Test func optionalStoragesMustBeListed() async throws {
        let configs = try Configs(#"{"baseURL": "https://a.example", "service": "s", "authentication": {"storages": ["file"], "optional": ["environment"]}}"#)
        defer { configs.remove() }
        let error = await expectConfigError {
            _ = try await APIConfig.load(environment: "x", configDirectory: configs.directory.path, environmentVariables: [:])
        }
        #expect(error?.key == "authentication.optional")
    }

    /// Hands out the secrets a named kind keeps.
    struct SecretReader: AuthenticationStorageFactory {
        let kind: APIConfig.StorageKind = "reader"
        let from: APIConfig.StorageKind
        let read: Locked<String?>
        func makeStorage(_ context: AuthenticationStorageContext) async throws(APIError) -> any AuthenticationStorage {
            let secrets = try await context.secretStorage(from, key: "from")
            do {
                read.withLock { $0 = nil }
                let secret = try await secrets.secret(named: "client-secret")
                read.withLock { $0 = secret }
            } catch {
                throw APIError(kind: .authentication, underlying: error)
            }
            return InMemoryAuthenticationStorage()
        }
    }

    @Test func secretsComeFromFilesAndVariablesAsStored() async throws {
        let secrets = FileManager.default.temporaryDirectory.appendingPathComponent("secrets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: secrets, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: secrets) }
        // A PEM key has line breaks inside: they are kept, the last one is not.
        try Data("file-secret-9a0\nsecond-line\n".utf8).write(to: secrets.appendingPathComponent("client-secret"))
        let configs = try Configs("""
            {"baseURL": "https://a.example", "service": "s",
             "authentication": {"storages": ["reader"], "file": {"directory": "\(secrets.path)"}}}
            """)
        defer { configs.remove() }
        let variables = ["RESOURCEFUL_AUTH_CLIENT_SECRET": "env-secret-3b2\r\nsecond-line\n"]
        for (kind, expected) in [(APIConfig.StorageKind.file, "file-secret-9a0\nsecond-line"), (.environment, "env-secret-3b2\r\nsecond-line")] {
            let read = Locked<String?>(nil)
            let dependencies = try await APIDependencies.live(
                environment: "x", configDirectory: configs.directory.path, environmentVariables: variables,
                storageFactories: [SecretReader(from: kind, read: read)]
            )
            try await dependencies.transport.shutdown()
            #expect(read.value == expected)
        }
        let error = await expectConfigError {
            _ = try await APIDependencies.live(
                environment: "x", configDirectory: configs.directory.path, environmentVariables: variables,
                storageFactories: [SecretReader(from: "vault", read: Locked(nil))]
            )
        }
        #expect(error?.key == "authentication.reader.from")
    }

    @Test func aSecretVariableOverTheLimitOrWithANULIsRefusedWithoutBeingShown() async throws {
        let configs = try Configs(#"{"baseURL": "https://a.example", "service": "s", "authentication": {"storages": ["reader"]}}"#)
        defer { configs.remove() }
        for value in [String(repeating: "k", count: 64 * 1024 + 1), "nul-secret-5e1\0tail"] {
            let error = await #expect(throws: APIError.self) {
                _ = try await APIDependencies.live(
                    environment: "x", configDirectory: configs.directory.path, environmentVariables: ["RESOURCEFUL_AUTH_CLIENT_SECRET": value],
                    storageFactories: [SecretReader(from: .environment, read: Locked(nil))]
                )
            }
            // The test's factory wraps what the storage threw.
            let description = error?.underlying.map { "\($0)" } ?? ""
            #expect(description.contains("RESOURCEFUL_AUTH_CLIENT_SECRET"))
            let shown = description.contains("kkkkkkkk") || description.contains("nul-secret-5e1")
            #expect(!shown, "the error shows the value")
        }
    }

    /// Knows when its credential expires.
    struct ExpiringStorage: AuthenticationStorage {
        let expiry: Date
        func authenticationHeader(for service: String) async throws -> String? { "Bearer expiring-4d0" }
        func credential(for service: String) async throws -> Credential? {
            Credential(header: "Bearer expiring-4d0", expiresAt: expiry)
        }
    }

    @Test func anExpiryPassesThroughAChainAndNeverShowsTheHeader() async throws {
        let expiry = Date(timeIntervalSince1970: 2_000_000_000)
        let configs = try Configs(#"{"baseURL": "https://a.example", "service": "s", "authentication": {"storages": ["environment", "expiring"]}}"#)
        defer { configs.remove() }
        struct Factory: AuthenticationStorageFactory {
            let kind: APIConfig.StorageKind = "expiring"
            let expiry: Date
            func makeStorage(_ context: AuthenticationStorageContext) async throws(APIError) -> any AuthenticationStorage {
                ExpiringStorage(expiry: expiry)
            }
        }
        let dependencies = try await APIDependencies.live(
            environment: "x", configDirectory: configs.directory.path, environmentVariables: [:], storageFactories: [Factory(expiry: expiry)]
        )
        try await dependencies.transport.shutdown()
        let credential = try #require(try await dependencies.authenticationStorage.credential(for: "s"))
        #expect(credential.expiresAt == expiry)
        #expect(credential.hasExpired(at: expiry.addingTimeInterval(-30), margin: .seconds(60)))
        #expect(!credential.hasExpired(at: expiry.addingTimeInterval(-90), margin: .seconds(60)))
        #expect(!credential.description.contains("expiring-4d0"))
        #expect(credential.description.contains("2033-05-18T03:33:20Z"))
    }
}
