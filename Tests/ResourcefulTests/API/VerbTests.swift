import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

@Suite struct VerbTests {
    struct Search: Encodable, Sendable {
        var name: String
        var page: Int
        var tags: [String]
        var filter: Filter
        var deleted: Bool?
        struct Filter: Encodable, Sendable { var minAge: Int; var active: Bool }
    }

    struct Rename: Encodable, Sendable, Equatable, Decodable { var name: String }

    @Test func indexSendsGETWithTheQuery() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/users", try .json([User(id: 1, name: "Ada")]))
            let search = Search(name: "A d", page: 2, tags: ["x", "y"], filter: .init(minAge: 30, active: true), deleted: nil)
            let users = try await harness.api.call(AdHocRequest<[User], Search>(.index, "users", parameters: search))
            #expect(users == [User(id: 1, name: "Ada")])
            let recorded = try #require(harness.server.requests.first)
            #expect(recorded.method == .get)
            #expect(recorded.path == "/v1/users")
            #expect(recorded.query == "name=A%20d&page=2&tags%5B%5D=x&tags%5B%5D=y&filter%5BminAge%5D=30&filter%5Bactive%5D=true")
            #expect(recorded.queryItems.map { "\($0.name)=\($0.value)" } == [
                "name=A d", "page=2", "tags[]=x", "tags[]=y", "filter[minAge]=30", "filter[active]=true",
            ])
            #expect(recorded.body.isEmpty)
            #expect(recorded.headerFields[.accept] == "application/json")
            #expect(recorded.headerFields[.contentType] == nil)
        }
    }

    @Test func showSendsGETWithoutQueryWhenParametersAreEmpty() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/users/7", try .json(User(id: 7, name: "Grace")))
            let user = try await harness.api.call(AdHocRequest<User, Empty>(.show, "users/\(7)"))
            #expect(user.name == "Grace")
            let recorded = try #require(harness.server.requests.first)
            #expect(recorded.method == .get)
            #expect(recorded.query.isEmpty)
        }
    }

    @Test func createPostsAJSONBody() async throws {
        try await Harness.run { harness in
            harness.server.stub(.post, "/v1/users", try .json(User(id: 9, name: "New"), status: .created))
            let response = try await harness.api.response(AdHocRequest<User, Rename>(.create, "users", parameters: Rename(name: "New")))
            #expect(response.status == .created)
            #expect(response.value == User(id: 9, name: "New"))
            let recorded = try #require(harness.server.requests.first)
            #expect(recorded.method == .post)
            #expect(recorded.query.isEmpty)
            #expect(recorded.headerFields[.contentType] == "application/json")
            #expect(try recorded.decodeBody(as: Rename.self) == Rename(name: "New"))
        }
    }

    @Test(arguments: [UpdateMethod.put, .patch])
    func updateSendsPUTOrPATCH(method: UpdateMethod) async throws {
        try await Harness.run { harness in
            harness.server.stub(method == .put ? .put : .patch, "/v1/users/3", try .json(User(id: 3, name: "Renamed")))
            let request = AdHocRequest<User, Rename>(.update, "users/3", parameters: Rename(name: "Renamed"), updateMethod: method)
            _ = try await harness.api.call(request)
            let recorded = try #require(harness.server.requests.first)
            #expect(recorded.method == (method == .put ? .put : .patch))
            #expect(try recorded.decodeBody(as: Rename.self) == Rename(name: "Renamed"))
        }
    }

    @Test func deleteSendsDELETEWithTheQueryAndDecodes204AsEmpty() async throws {
        try await Harness.run { harness in
            harness.server.stub(.delete, "/v1/users/3", .status(.noContent))
            let response = try await harness.api.response(AdHocRequest<Empty, [String: Bool]>(.delete, "users/3", parameters: ["hard": true]))
            #expect(response.status == .noContent)
            let recorded = try #require(harness.server.requests.first)
            #expect(recorded.method == .delete)
            #expect(recorded.query == "hard=true")
            #expect(recorded.body.isEmpty)
        }
    }

    @Test func headersFromConfigAndRequestWithRequestWinning() async throws {
        try await Harness.run(configure: { $0.baseHeaders = ["User-Agent": "base-agent", "X-Team": "core"] }) { harness in
            harness.server.stub(.get, "/v1/ping", .status(.noContent))
            _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "ping", headers: ["X-Team": "edge", "X-Trace": "1"]))
            let fields = try #require(harness.server.requests.first).headerFields
            #expect(fields[HTTPField.Name("User-Agent")!] == "base-agent")
            #expect(fields[values: HTTPField.Name("X-Team")!] == ["edge"])
            #expect(fields[HTTPField.Name("X-Trace")!] == "1")
        }
    }

    @Test func verbsMapToMethods() {
        #expect(ResourceVerb.allCases.map { $0.method().rawValue } == ["GET", "GET", "POST", "PUT", "DELETE"])
        #expect(ResourceVerb.update.method(update: .patch) == .patch)
    }
}
