import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

@Suite struct ResponseTests {
    struct ProblemBody: Decodable, Sendable, Equatable {
        var code: String
        var message: String
    }

    struct ShowUser: ResourceRequest {
        typealias ResourceType = User
        typealias ErrorResponse = ProblemBody
        let verb = ResourceVerb.show
        let path: ResourcePath
        init(id: Int) { path = "users/\(id)" }
    }

    @Test func emptyBodyAndNoContentDecodeToEmpty() async throws {
        try await Harness.run { harness in
            harness.server.stub(.post, "/v1/jobs", MockResponse(status: .ok))
            harness.server.stub(.delete, "/v1/jobs/1", .status(.noContent))
            let created = try await harness.api.response(AdHocRequest<Empty, [String: Int]>(.create, "jobs", parameters: ["n": 1]))
            #expect(created.status == .ok)
            let deleted = try await harness.api.response(AdHocRequest<Empty, Empty>(.delete, "jobs/1"))
            #expect(deleted.status == .noContent)
        }
    }

    @Test(arguments: [HTTPResponse.Status.notFound, .unprocessableContent, .internalServerError])
    func errorStatusCarriesTheTypedErrorBody(status: HTTPResponse.Status) async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/users/5", .json(raw: #"{"code":"E\#(status.code)","message":"nope"}"#, status: status))
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(ShowUser(id: 5)) }
            #expect(error?.kind == .unacceptableStatus)
            #expect(error?.status == status)
            #expect(error?.method == .get)
            #expect(error?.path == "users/5")
            #expect(error?.errorResponse(as: ProblemBody.self) == ProblemBody(code: "E\(status.code)", message: "nope"))
            #expect(error.map { "\($0)" } == "APIError.unacceptableStatus GET /users/5 → \(status.code)")
        }
    }

    @Test func undecodableErrorBodyStillGivesTheStatus() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/users/5", .json(raw: "<html>oops</html>", status: .badGateway))
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(ShowUser(id: 5)) }
            #expect(error?.status == .badGateway)
            #expect(error?.errorResponse == nil)
        }
    }

    @Test func decodingErrorNamesTheField() async throws {
        struct Team: Decodable, Sendable { var members: [User] }
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/team", .json(raw: #"{"members":[{"id":1,"name":"a"},{"id":"two","name":"b"}]}"#))
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(AdHocRequest<Team, Empty>(.show, "team")) }
            #expect(error?.kind == .decodingFailed)
            #expect(error?.codingPath == "members[1].id")
            #expect(error?.underlying is DecodingError)
            let description = error.map { "\($0)" } ?? ""
            #expect(description.contains("members[1].id"))
            #expect(!description.contains("two"))
        }
    }

    @Test func missingKeyIsNamedToo() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/users/1", .json(raw: #"{"id":1}"#))
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(ShowUser(id: 1)) }
            #expect(error?.codingPath == "name")
        }
    }

    @Test func emptyBodyForAValueTypeIsADecodingError() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/users/1", .status(.ok))
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(ShowUser(id: 1)) }
            #expect(error?.kind == .decodingFailed)
            #expect(error?.detail == "the body is empty")
        }
    }

    @Test func responseCarriesStatusAndHeaders() async throws {
        try await Harness.run { harness in
            var stub = try MockResponse.json(User(id: 1, name: "Ada"))
            stub.headerFields[HTTPField.Name("X-RateLimit-Remaining")!] = "41"
            harness.server.stub(.get, "/v1/users/1", stub)
            let response = try await harness.api.response(ShowUser(id: 1))
            #expect(response.value == User(id: 1, name: "Ada"))
            #expect(response.status == .ok)
            #expect(response.headerFields[HTTPField.Name("X-RateLimit-Remaining")!] == "41")
        }
    }
}
