import Foundation
import InMemoryLogging
import Logging
import NIOCore
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

@Suite struct MiddlewareTests {
    /// Records its name on the way in and out, and adds a header.
    struct Tracing: APIMiddleware {
        let name: String
        let trail: Locked<[String]>
        func intercept(
            _ request: TransportRequest, context: CallContext,
            next: (TransportRequest, CallContext) async throws -> TransportResponse
        ) async throws -> TransportResponse {
            trail.withLock { $0.append("in \(name)") }
            var request = request
            request.headerFields.append(HTTPField(name: HTTPField.Name("X-Step")!, value: name))
            let response = try await next(request, context)
            trail.withLock { $0.append("out \(name)") }
            return response
        }
    }

    /// Answers from a fallback when the server fails.
    struct Fallback: APIMiddleware {
        func intercept(
            _ request: TransportRequest, context: CallContext,
            next: (TransportRequest, CallContext) async throws -> TransportResponse
        ) async throws -> TransportResponse {
            let response = try await next(request, context)
            guard response.status.kind == .serverError else { return response }
            var body = ByteBuffer()
            body.writeString(#"{"id":0,"name":"cached"}"#)
            return TransportResponse(status: .ok, headerFields: [.contentType: "application/json"], body: body)
        }
    }

    @Test func middlewaresRunInOrderAroundTheTransport() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/users/1", try .json(User(id: 1, name: "Ada")))
            let trail = Locked<[String]>([])
            let api = API(
                dependencies: harness.dependencies,
                middlewares: [Tracing(name: "a", trail: trail), LoggingMiddleware(), Tracing(name: "b", trail: trail)]
            )
            _ = try await api.call(AdHocRequest<User, Empty>(.show, "users/1"))
            #expect(trail.value == ["in a", "in b", "out b", "out a"])
            #expect(harness.server.requests.first?.headerFields[values: HTTPField.Name("X-Step")!] == ["a", "b"])
            let logged = harness.logs.entries.first?.metadata["resourceful.request.headers"]?.description ?? ""
            #expect(logged.contains("x-step"))
        }
    }

    @Test func aMiddlewareCanReplaceTheResponse() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/users/1", .status(.serviceUnavailable))
            let api = API(dependencies: harness.dependencies, middlewares: [Fallback()])
            let user = try await api.call(AdHocRequest<User, Empty>(.show, "users/1"))
            #expect(user == User(id: 0, name: "cached"))
        }
    }

    @Test func contextDescribesTheCall() async throws {
        struct Capture: APIMiddleware {
            let seen: Locked<CallContext?>
            func intercept(
                _ request: TransportRequest, context: CallContext,
                next: (TransportRequest, CallContext) async throws -> TransportResponse
            ) async throws -> TransportResponse {
                seen.withLock { $0 = context }
                return try await next(request, context)
            }
        }
        let stub = StubTransport { _ in TransportResponse(status: .noContent) }
        let seen = Locked<CallContext?>(nil)
        let deps = APIDependencies(apiConfig: APIConfig(baseURL: URL(string: "http://example.invalid")!, service: "s"), transport: stub)
        let api = API(dependencies: deps, middlewares: [Capture(seen: seen)])
        _ = try await api.call(AdHocRequest<Empty, [String: Int]>(.index, "teams/\("a b")/members", parameters: ["page": 2]))
        let context = try #require(seen.value)
        #expect(context.verb == .index)
        #expect(context.target.path == "teams/a%20b/members")
        #expect(context.pathTemplate == "teams/{}/members")
        #expect(context.target.encodedQuery == "page=2")
        #expect(context.requestID.count == 16)
        #expect(stub.requests.first?.url == "http://example.invalid/teams/a%20b/members?page=2")
    }
}
