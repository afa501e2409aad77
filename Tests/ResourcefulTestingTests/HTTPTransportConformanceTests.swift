import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import Resourceful
import ResourcefulTesting
import Testing

/// A transport written the way an app that already uses AsyncHTTPClient's async API would write
/// one: `HTTPClient` here is AsyncHTTPClient's, with no qualification, beside `import Resourceful`.
struct AppTransport: HTTPTransport {
    let client: HTTPClient

    init() {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.connectionPool.retryConnectionEstablishment = false
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        guard let deadline = request.nioDeadline else { throw TransportError.timeout }
        do {
            let response = try await client.execute(HTTPClientRequest(request), deadline: deadline)
            let head = response.transportHead
            if request.streamsResponseBody {
                let length = response.headers.first(name: "content-length").flatMap(Int.init)
                return TransportResponse(status: head.status, headerFields: head.fields, body: TransportBody(stream: IdleBoundedBody(body: response.body, idle: request.idleTimeout, deadline: request.deadline), length: length))
            }
            let body = try await response.body.collect(upTo: request.maxResponseBytes)
            return TransportResponse(status: head.status, headerFields: head.fields, body: body)
        } catch {
            throw transportError(error)
        }
    }

    func shutdown() async throws {
        try await client.shutdown()
    }
}

@Suite struct HTTPTransportConformanceTests {
    @Test func theLiveTransportConforms() async throws {
        try await AsyncHTTPClientTransport.withTransport { transport in
            try await HTTPTransportConformance(transport: transport).run()
        }
    }

    @Test func aTransportWrittenByAnAppConforms() async throws {
        try await withShutdown(AppTransport()) { transport in
            try await HTTPTransportConformance(transport: transport).run()
        }
    }

    @Test func aStubForwardingToATransportConforms() async throws {
        try await AsyncHTTPClientTransport.withTransport { transport in
            try await HTTPTransportConformance(transport: StubTransport { try await transport.send($0) }).run()
        }
    }

    @Test func aTransportThatFollowsRedirectsFailsTheSuite() async throws {
        let transport = AppTransportFollowingRedirects()
        let failure = await #expect(throws: HTTPTransportConformance<AppTransportFollowingRedirects>.Failure.self) {
            try await HTTPTransportConformance(transport: transport).run()
        }
        #expect(failure?.check == "returnsEveryStatusAndRedirectsAsTheyAre")
        try await transport.client.shutdown()
    }

    struct User: Codable, Equatable, Sendable { var id: Int; var name: String }

    @Test func theAppsTransportServesAllFiveVerbsRetriesAndTimeouts() async throws {
        try await withShutdown(AppTransport()) { transport in try await fiveVerbs(transport) }
    }

    private func fiveVerbs(_ transport: AppTransport) async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/users", .json(raw: #"[{"id":1,"name":"Ada"}]"#))
            server.stub(.get, "/v1/users/1", .status(.serviceUnavailable), .json(raw: #"{"id":1,"name":"Ada"}"#))
            server.stub(.post, "/v1/users", .json(raw: #"{"id":2,"name":"Grace"}"#, status: .created))
            server.stub(.put, "/v1/users/2", .status(.noContent))
            server.stub(.delete, "/v1/users/2", .status(.noContent))
            server.stub(.get, "/v1/slow", MockResponse.status(.noContent).delayed(by: .seconds(5)))
            var config = APIConfig(baseURL: server.baseURL.appendingPathComponent("v1"), service: "s")
            config.retry = .init(maxAttempts: 2, baseDelay: .milliseconds(5), maxDelay: .milliseconds(10))
            let api = API(dependencies: APIDependencies(apiConfig: config, transport: transport))
            #expect(try await api.call(AdHocRequest<[User], Empty>(.index, "users")) == [User(id: 1, name: "Ada")])
            #expect(try await api.call(AdHocRequest<User, Empty>(.show, "users/1")) == User(id: 1, name: "Ada"))
            #expect(try await api.call(AdHocRequest<User, User>(.create, "users", parameters: User(id: 0, name: "Grace"))).id == 2)
            _ = try await api.call(AdHocRequest<Empty, User>(.update, "users/2", parameters: User(id: 2, name: "G")))
            _ = try await api.call(AdHocRequest<Empty, Empty>(.delete, "users/2"))
            #expect(server.requests.filter { $0.path == "/v1/users/1" }.count == 2)
            let error = await #expect(throws: APIError.self) {
                _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "slow", timeout: .milliseconds(300)))
            }
            #expect(error?.kind == .timeout)
        }
    }
}

/// An app's transport that forgot to turn AsyncHTTPClient's redirect following off.
struct AppTransportFollowingRedirects: HTTPTransport {
    let client = HTTPClient(eventLoopGroupProvider: .singleton)

    func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        guard let deadline = request.nioDeadline else { throw TransportError.timeout }
        do {
            let response = try await client.execute(HTTPClientRequest(request), deadline: deadline)
            let body = try await response.body.collect(upTo: request.maxResponseBytes)
            let head = response.transportHead
            return TransportResponse(status: head.status, headerFields: head.fields, body: body)
        } catch {
            throw transportError(error)
        }
    }
}
