import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

/// The README's "Recording and replaying" sample: it records `Cassettes/users.har` when the file is
/// missing, and replays it, with no request reaching the server, once it is committed.
@Suite struct ReadmeCassetteTests {
    struct User: Codable, Sendable { let id: Int; var name: String }

    struct ListUsers: ResourceRequest {
        typealias ResourceType = [User]
        let verb = ResourceVerb.index
        let path: ResourcePath = "users"
    }

    @Test func recordsOnceAndReplaysInCI() async throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Cassettes/users.har")
        let committed = FileManager.default.fileExists(atPath: file.path)
        try await MockServer.withRunning { server in
            server.stub(.get, "/users", try .json([User(id: 1, name: "Ada"), User(id: 2, name: "Grace")]))

            let cassette = Cassette(file, mode: .once, matching: RequestMatching(ignoresOrigin: true))
            let api = API(dependencies: APIDependencies(
                apiConfig: APIConfig(baseURL: server.baseURL, service: "example-api"),
                authenticationStorage: InMemoryAuthenticationStorage(["example-api": "Bearer test-token"]),
                transport: try cassette.transport(network: AsyncHTTPClientTransport())
            ))
            let users = try await api.call(ListUsers())
            try await api.shutdown()

            #expect(users.map(\.name) == ["Ada", "Grace"])
            #expect(server.requests.isEmpty == committed)
        }
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(!text.contains("test-token"))
    }
}
