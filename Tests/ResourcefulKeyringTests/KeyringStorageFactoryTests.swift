import Foundation
import HTTPTypes
import Resourceful
import ResourcefulKeyring
import ResourcefulTesting
import Testing

/// `KeyringStorageFactory` reads its own keys (`authentication.keyring.*`); an account given to
/// the factory in code wins over the file's, as a command's `--account` does.
@Suite struct KeyringStorageFactoryTests {
    /// A configuration folder whose `development.json` names the keyring with `keyring` (JSON
    /// members of `authentication.keyring`).
    static func configure(_ server: MockServer, service: String, keyring: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyring-factory-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let json = #"""
            {"baseURL": "\#(server.baseURL.absoluteString)", "service": "\#(service)",
             "authentication": {"storages": ["keyring"], "keyring": {\#(keyring)}}}
            """#
        try Data(json.utf8).write(to: directory.appendingPathComponent("development.json"))
        return directory
    }

    @Test func theConfiguredAccountAndSchemeAreReadByTheFactoryAndAnAccountInCodeWins() async throws {
        let keyring = try PrivateSession.keyring()
        try await MockServer.withRunning { server in
            server.stub(.get, "/users/1", .json(raw: #"{"id":1}"#), .json(raw: #"{"id":1}"#))
            let service = PrivateSession.uniqueService()
            let directory = try Self.configure(server, service: service, keyring: #""account": "grace", "scheme": "Token""#)
            defer { try? FileManager.default.removeItem(at: directory) }
            try await keyring.store("grace-secret", service: service, account: "grace")
            try await keyring.store("ada-secret", service: service, account: "ada")

            for factory in [KeyringStorageFactory(keyring: keyring), KeyringStorageFactory(keyring: keyring, account: "ada")] {
                let api = API(dependencies: try await APIDependencies.live(
                    environment: "development", configDirectory: directory.path, environmentVariables: [:], storageFactories: [factory]
                ))
                _ = try await api.call(AdHocRequest<[String: Int], Empty>(.show, "users/1"))
                try await api.shutdown()
            }
            try await keyring.delete(service: service, account: "grace")
            try await keyring.delete(service: service, account: "ada")
            #expect(server.requests.map { $0.headerFields[.authorization] } == ["Token grace-secret", "Token ada-secret"])
        }
    }

    @Test(arguments: [#""account": """#, #""account": 7"#])
    func aBadAccountIsAConfigurationErrorNamingItsKey(keyring: String) async throws {
        try await MockServer.withRunning { server in
            let directory = try Self.configure(server, service: "s", keyring: keyring)
            defer { try? FileManager.default.removeItem(at: directory) }
            let error = await #expect(throws: APIError.self) {
                _ = try await APIDependencies.live(
                    environment: "development", configDirectory: directory.path, environmentVariables: [:], storageFactories: [KeyringStorageFactory()]
                )
            }
            #expect(error?.kind == .invalidConfiguration)
            #expect(error?.description.contains("authentication.keyring.account") == true, "\(String(describing: error))")
        }
    }

    @Test func aVariablePickingAnotherAccountIsRefusedAndAnAccountInCodeIsNot() async throws {
        let keyring = try PrivateSession.keyring()
        try await MockServer.withRunning { server in
            server.stub(.get, "/users/1", .json(raw: #"{"id":1}"#))
            let service = PrivateSession.uniqueService()
            let directory = try Self.configure(server, service: service, keyring: #""account": "grace""#)
            defer { try? FileManager.default.removeItem(at: directory) }
            let variable = "RESOURCEFUL_AUTHENTICATION_KEYRING_ACCOUNT"
            let error = await #expect(throws: APIError.self) {
                _ = try await APIDependencies.live(
                    environment: "development", configDirectory: directory.path, environmentVariables: [variable: "ada"],
                    storageFactories: [KeyringStorageFactory(keyring: keyring)]
                )
            }
            #expect(error?.kind == .invalidConfiguration)
            let underlying = error?.underlying as? APIConfigError
            #expect(underlying?.kind == .movedByVariable && underlying?.source == variable && underlying?.key == "authentication.keyring.account")
            #expect(error.map { "\($0)" }?.contains("\"ada\"") == false, "the value is not repeated")
            // The file's own account from the variable is the file's; an account in code is the program's.
            for (variables, factory) in [([variable: "grace"], KeyringStorageFactory(keyring: keyring)), ([variable: "ada"], KeyringStorageFactory(keyring: keyring, account: "ada"))] {
                let dependencies = try await APIDependencies.live(
                    environment: "development", configDirectory: directory.path, environmentVariables: variables, storageFactories: [factory]
                )
                try await dependencies.transport.shutdown()
            }
            #expect(server.requests.isEmpty)
        }
    }

    @Test func anEmptyAccountGivenInCodeIsRefusedAndTheConfiguredOneIsThenNotRead() async throws {
        try await MockServer.withRunning { server in
            // The configured account is bad too: with an account in code, it is not read.
            let directory = try Self.configure(server, service: "s", keyring: #""account": """#)
            defer { try? FileManager.default.removeItem(at: directory) }
            let error = await #expect(throws: APIError.self) {
                _ = try await APIDependencies.live(
                    environment: "development", configDirectory: directory.path, environmentVariables: [:],
                    storageFactories: [KeyringStorageFactory(account: "")]
                )
            }
            #expect(error?.kind == .invalidConfiguration)
            #expect(error?.description.contains("the keyring account given instead of authentication.keyring.account is empty") == true)
            let dependencies = try await APIDependencies.live(
                environment: "development", configDirectory: directory.path, environmentVariables: [:],
                storageFactories: [KeyringStorageFactory(account: "ada")]
            )
            try await dependencies.transport.shutdown()
        }
    }

    @Test func aSecretIsReadWithoutTheLineBreakSecretToolKeeps() async throws {
        let keyring = try PrivateSession.keyring()
        let account = "secrets-\(UUID().uuidString)"
        let secrets = KeyringSecretStorage(account: account, keyring: keyring)
        try await secrets.storeSecret("client-secret-1f4\n", named: "client-secret")
        let read = try await secrets.secret(named: "client-secret")
        try await secrets.deleteSecret(named: "client-secret")
        #expect(read == "client-secret-1f4")
    }
}
