import Foundation
import HTTPTypes
import Resourceful
import ResourcefulKeyring
import ResourcefulTesting
import Testing

/// `APIDependencies.live(environment:keyring:)`: the configured chain, with the keyring in it.
@Suite struct APIDependenciesKeyringTests {
    @Test func theConfiguredChainAsksTheKeyringFirst() async throws {
        guard ProcessInfo.processInfo.environment["RESOURCEFUL_PRIVATE_KEYRING"] == "1" else { throw PrivateSession.NotPrivate() }
        try await MockServer.withRunning { server in
            server.stub(.get, "/users/1", .json(raw: #"{"id":1}"#), .json(raw: #"{"id":1}"#))
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyring-chain-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let service = PrivateSession.uniqueService()
            let json = #"""
                {"baseURL": "\#(server.baseURL.absoluteString)", "service": "\#(service)",
                 "authentication": {"storages": ["keyring", "environment"], "optional": ["keyring"], "keyring": {"account": "grace"}}}
                """#
            try Data(json.utf8).write(to: directory.appendingPathComponent("development.json"))
            let variable = EnvironmentAuthenticationStorage.variableName(prefix: "RESOURCEFUL_AUTH", service: service, suffix: "TOKEN")
            let variables = ProcessInfo.processInfo.environment.merging([variable: "from-environment"]) { $1 }

            let keyring = Keyring()
            try await keyring.store("from-keyring", service: service, account: "grace")
            let api = API(dependencies: try await APIDependencies.live(
                environment: "development", keyring: keyring, configDirectory: directory.path, environmentVariables: variables
            ))
            _ = try await api.call(AdHocRequest<[String: Int], Empty>(.show, "users/1"))
            try await keyring.delete(service: service, account: "grace")
            // Without the keyring entry, the chain goes on to the environment (after the cache).
            let fresh = API(dependencies: try await APIDependencies.live(
                environment: "development", keyring: keyring, configDirectory: directory.path, environmentVariables: variables
            ))
            _ = try await fresh.call(AdHocRequest<[String: Int], Empty>(.show, "users/1"))
            try await api.shutdown()
            try await fresh.shutdown()
            #expect(server.requests.map { $0.headerFields[.authorization] } == ["Bearer from-keyring", "Bearer from-environment"])
        }
    }
}
