import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

/// When each ``CassetteMode`` reaches the network, against a MockServer that counts requests.
@Suite struct CassetteModeTests {
    typealias User = CassetteFixture.User

    private func show(_ cassette: Cassette, _ server: MockServer, _ path: String) async throws -> User {
        try await AsyncHTTPClientTransport.withTransport { live in
            let transport = try cassette.transport(network: live)
            return try await CassetteFixture.api(server.baseURL, transport).call(AdHocRequest<User, Empty>(.show, ResourcePath(encoded: path)))
        }
    }

    @Test func onceRecordsWhenTheFileIsMissingAndReplaysAfter() async throws {
        let file = try CassetteFixture.scratchFile()
        try await MockServer.withRunning { server in
            server.stub(.get, "/users/1", try .json(User(id: 1, name: "Ada")), try .json(User(id: 1, name: "Changed")))
            let cassette = Cassette(file, mode: .once)
            #expect(cassette.usesNetwork)
            #expect(try await show(cassette, server, "users/1").name == "Ada")
            #expect(server.requests.count == 1)
            #expect(!cassette.usesNetwork)
            #expect(try await show(cassette, server, "users/1").name == "Ada")
            #expect(server.requests.count == 1)
        }
    }

    @Test func replayNeverUsesTheNetworkAndNamesWhatIsMissing() async throws {
        let file = try CassetteFixture.scratchFile()
        try await MockServer.withRunning { server in
            server.stub(.get, "/users/1", try .json(User(id: 1, name: "Ada")))
            server.stub(.get, "/users/2", try .json(User(id: 2, name: "Grace")))
            _ = try await show(Cassette(file, mode: .record), server, "users/1")
            let before = server.requests.count
            let error = await #expect(throws: APIError.self) {
                try await show(Cassette(file, mode: .replay), server, "users/2?api_key=\(CassetteFixture.apiKey)")
            }
            #expect(server.requests.count == before)
            #expect(error?.kind == .transport)
            let cassetteError = try #require(error?.underlying as? CassetteError)
            #expect(cassetteError.kind == .noRecording)
            #expect(cassetteError.detail.contains("GET \(server.baseURL.absoluteString)/users/2?api_key=***"))
            #expect(cassetteError.detail.contains("closest recording, GET \(server.baseURL.absoluteString)/users/1"))
            #expect(cassetteError.detail.contains("the path differs"))
            #expect(!"\(String(describing: error))".contains(CassetteFixture.apiKey))
            #expect(!cassetteError.description.contains(CassetteFixture.apiKey))
        }
    }

    @Test func replayOfAMissingFileFailsAtOnce() throws {
        let file = try CassetteFixture.scratchFile("missing.har")
        let error = #expect(throws: CassetteError.self) {
            _ = try Cassette(file, mode: .replay).transport(network: StubTransport { _ in TransportResponse(status: .ok) })
        }
        #expect(error?.kind == .unreadableFile)
        #expect(error?.detail.contains("missing.har") == true)
    }

    @Test func recordStartsTheFileAnew() async throws {
        let file = try CassetteFixture.scratchFile()
        try await MockServer.withRunning { server in
            server.stub(.get, "/users/1", try .json(User(id: 1, name: "Ada")))
            server.stub(.get, "/users/2", try .json(User(id: 2, name: "Grace")))
            _ = try await show(Cassette(file, mode: .record), server, "users/1")
            _ = try await show(Cassette(file, mode: .record), server, "users/2")
            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(text.contains("/users/2"))
            #expect(!text.contains("/users/1"))
        }
    }

    @Test func newEpisodesReplaysWhatMatchesAndRecordsTheRest() async throws {
        let file = try CassetteFixture.scratchFile()
        try await MockServer.withRunning { server in
            server.stub(.get, "/users/1", try .json(User(id: 1, name: "Ada")), try .json(User(id: 1, name: "Changed")))
            server.stub(.get, "/users/2", try .json(User(id: 2, name: "Grace")))
            _ = try await show(Cassette(file, mode: .record), server, "users/1")
            let cassette = Cassette(file, mode: .newEpisodes)
            try await AsyncHTTPClientTransport.withTransport { live in
                let api = CassetteFixture.api(server.baseURL, try cassette.transport(network: live))
                #expect(try await api.call(AdHocRequest<User, Empty>(.show, "users/1")).name == "Ada")
                #expect(try await api.call(AdHocRequest<User, Empty>(.show, "users/2")).name == "Grace")
            }
            // users/1 came from the file, users/2 from the server, and is now in the file too.
            #expect(server.requests.map(\.path) == ["/users/1", "/users/2"])
            let replayer = try ReplayingTransport(file: file)
            let replayed = try await CassetteFixture.api(server.baseURL, replayer).call(AdHocRequest<User, Empty>(.show, "users/2"))
            #expect(replayed.name == "Grace")
        }
    }
}
