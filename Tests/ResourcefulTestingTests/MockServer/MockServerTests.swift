import Foundation
import HTTPTypes
import NIOCore
import Resourceful
import ResourcefulTesting
import Testing

@Suite struct MockServerTests {
    /// Sends one request through a live transport.
    private func send(
        _ server: MockServer,
        _ method: HTTPRequest.Method,
        _ pathAndQuery: String,
        body: String? = nil,
        headers: HTTPFields = [:],
        timeout: Duration = .seconds(30)
    ) async throws -> TransportResponse {
        let transport = AsyncHTTPClientTransport()
        let request = TransportRequest(
            method: method,
            url: server.baseURL.absoluteString + pathAndQuery,
            headerFields: headers,
            body: body.map { ByteBuffer(string: $0) },
            deadline: .now + timeout,
            maxResponseBytes: 1 << 20
        )
        do {
            let response = try await transport.send(request)
            try await transport.shutdown()
            return response
        } catch {
            try await transport.shutdown()
            throw error
        }
    }

    @Test func listensOnLoopbackAtAnAssignedPort() async throws {
        try await MockServer.withRunning { server in
            #expect(server.port > 0)
            #expect(server.baseURL.absoluteString == "http://127.0.0.1:\(server.port)")
        }
    }

    @Test func recordsMethodPathQueryHeadersAndBody() async throws {
        try await MockServer.withRunning { server in
            server.stub(.post, "/items", .status(.created))
            let response = try await send(server, .post, "/items?x=1&y=a%20b", body: "hello", headers: [HTTPField.Name("X-Test")!: "yes"])
            #expect(response.status == .created)
            let recorded = try #require(server.requests.first)
            #expect(recorded.method == .post)
            #expect(recorded.path == "/items")
            #expect(recorded.query == "x=1&y=a%20b")
            #expect(recorded.queryItems.map(\.value) == ["1", "a b"])
            #expect(recorded.headerFields[HTTPField.Name("X-Test")!] == "yes")
            #expect(recorded.bodyText == "hello")
        }
    }

    @Test func stubbedResponsesAreServedInTurnAndTheLastRepeats() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/flaky", .status(.serviceUnavailable), .status(.badGateway), .json(raw: "{}"))
            var statuses: [Int] = []
            for _ in 0..<4 { statuses.append(try await send(server, .get, "/flaky").status.code) }
            #expect(statuses == [503, 502, 200, 200])
        }
    }

    @Test func routeParametersAndHandlers() async throws {
        try await MockServer.withRunning { server in
            server.route(.get, "/users/:id/posts/:post") { request in
                .json(raw: #"{"user":"\#(request.pathParameters["id"] ?? "")","post":"\#(request.pathParameters["post"] ?? "")"}"#)
            }
            let response = try await send(server, .get, "/users/a%20b/posts/7")
            #expect(String(buffer: response.body.bytes ?? ByteBuffer()) == #"{"user":"a b","post":"7"}"#)
            #expect(response.headerFields[.contentType] == "application/json")
        }
    }

    @Test func laterRoutesWinAndUnmatchedRequestsGet404() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/a", .status(.ok))
            server.stub(.get, "/a", .status(.accepted))
            #expect(try await send(server, .get, "/a").status == .accepted)
            let missing = try await send(server, .delete, "/a")
            #expect(missing.status == .notFound)
            #expect(String(buffer: missing.body.bytes ?? ByteBuffer()).contains("no route for DELETE /a"))
            server.reset()
            #expect(server.requests.isEmpty)
            #expect(try await send(server, .get, "/a").status == .notFound)
        }
    }

    @Test func faultsCloseTheConnection() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/close", .closeConnection)
            server.stub(.get, "/head", MockResponse(status: .ok, body: Data("abc".utf8), fault: .closeAfterHead))
            server.stub(.get, "/mid", MockResponse(status: .ok, body: Data(repeating: 65, count: 100), fault: .closeMidBody(bytes: 10)))
            for path in ["/close", "/head", "/mid"] {
                let error = await #expect(throws: TransportError.self, "\(path)") { _ = try await send(server, .get, path) }
                #expect(error?.kind == .connectionFailed)
            }
            #expect(server.requests.count == 3)
        }
    }

    @Test func delayedResponseArrivesLater() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/slow", MockResponse.status(.ok).delayed(by: .milliseconds(200)))
            let start = ContinuousClock.now
            let status = try await send(server, .get, "/slow").status
            #expect(status == .ok)
            #expect(ContinuousClock.now - start >= .milliseconds(200))
        }
    }

    @Test func keepAliveReusesOneConnection() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/k", .status(.noContent))
            try await AsyncHTTPClientTransport.withTransport { transport in
                for _ in 0..<5 {
                    let request = TransportRequest(
                        method: .get, url: server.baseURL.absoluteString + "/k", deadline: .now + .seconds(60), maxResponseBytes: 100
                    )
                    _ = try await transport.send(request)
                }
            }
            #expect(server.requests.count == 5)
            #expect(server.connectionCount == 1)
        }
    }

    @Test func shutdownWithAnOpenConnectionReturns() async throws {
        let server = try await MockServer.start()
        server.stub(.get, "/k", .status(.noContent))
        try await AsyncHTTPClientTransport.withTransport { transport in
            _ = try await transport.send(
                TransportRequest(method: .get, url: server.baseURL.absoluteString + "/k", deadline: .now + .seconds(60), maxResponseBytes: 100)
            )
            try await server.shutdown()
        }
        #expect(server.requests.count == 1)
    }
}
