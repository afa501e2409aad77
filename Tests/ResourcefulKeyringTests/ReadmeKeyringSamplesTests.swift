import Foundation
import HTTPTypes
import Resourceful
import ResourcefulKeyring
import ResourcefulTesting
import Testing

/// The README's keyring samples, compiled and run on the private keyring.
@Suite struct ReadmeKeyringSamplesTests {
    @Test func keyringSample() async throws {
        guard ProcessInfo.processInfo.environment["RESOURCEFUL_PRIVATE_KEYRING"] == "1" else { throw PrivateSession.NotPrivate() }
        try await MockServer.withRunning { server in
            server.stub(.get, "/users/1", .json(raw: #"{"id":1}"#))
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("readme-keyring-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let service = PrivateSession.uniqueService()
            try Data(#"{"baseURL": "\#(server.baseURL.absoluteString)", "service": "\#(service)"}"#.utf8)
                .write(to: directory.appendingPathComponent("development.json"))

            let keyring = Keyring()
            try await keyring.store("t0k3n", service: service, account: "ada")
            let deps = try await APIDependencies.live(environment: "development", keyringAccount: "ada", configDirectory: directory.path)
            let api = API(dependencies: deps)
            _ = try await api.call(AdHocRequest<[String: Int], Empty>(.show, "users/1"))
            try await api.shutdown()
            try await keyring.delete(service: service, account: "ada")
            #expect(server.requests.first?.headerFields[.authorization] == "Bearer t0k3n")
        }
    }
}
