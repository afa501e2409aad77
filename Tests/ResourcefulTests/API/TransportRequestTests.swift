import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

@Suite struct TransportRequestTests {
    struct Search: ResourceRequest {
        typealias ResourceType = [User]
        struct Parameters: Encodable, Sendable { var q: String; var page: Int }
        let verb = ResourceVerb.index
        let path: ResourcePath = "users"
        let parameters = Parameters(q: "a b", page: 2)
        var headers: [String: String] { ["X-Trace": "t1"] }
    }

    @Test func buildsWhatACallWouldSendWithoutSendingIt() async throws {
        try await Harness.run { harness in
            let built = try await harness.api.transportRequest(for: Search())
            #expect(built.method == .get)
            #expect(built.url == harness.server.baseURL.absoluteString + "/v1/users?q=a%20b&page=2")
            #expect(built.headerFields[.authorization] == Harness.token)
            #expect(built.headerFields[.accept] == "application/json")
            #expect(built.headerFields[HTTPField.Name("X-Trace")!] == "t1")
            #expect(built.body == nil)
            #expect(harness.server.requests.isEmpty)

            // The same request, called, reaches the server with those fields.
            harness.server.stub(.get, "/v1/users", .json(raw: "[]"))
            _ = try await harness.api.call(Search())
            let sent = try #require(harness.server.requests.first)
            #expect(sent.headerFields[.authorization] == built.headerFields[.authorization])
            #expect(sent.query == "q=a%20b&page=2")
        }
    }

    @Test func refusesWhatACallWouldRefuse() async throws {
        try await Harness.run(authorization: "Bearer a\r\nInjected: 1") { harness in
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.transportRequest(for: Search()) }
            #expect(error?.kind == .invalidRequest)
            #expect(error?.path == "users")
            #expect(!String(describing: error).contains("Injected"))
        }
    }
}
