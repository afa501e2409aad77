import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdApp
import HummingbirdTesting
import InMemoryLogging
import Logging
import Resourceful
import ResourcefulTesting
import Testing
import UpstreamUsers

@Suite struct HummingbirdAppTests {
    /// The app with its API pointed at `server` and credentials swapped for in-memory ones.
    private func withApp(
        _ body: @Sendable (any TestClientProtocol, MockServer, InMemoryLogHandler) async throws -> Void
    ) async throws {
        try await MockServer.withRunning { server in
            let transport = AsyncHTTPClientTransport()
            let logs = InMemoryLogHandler()
            var logger = Logger(label: "test") { _ in logs }
            logger.logLevel = .debug
            let dependencies = APIDependencies(
                apiConfig: APIConfig(baseURL: server.baseURL, service: "upstream"),
                authenticationStorage: InMemoryAuthenticationStorage(["upstream": "Bearer upstream-SECRET"]),
                httpClient: transport,
                logger: logger
            )
            let app = buildApplication(api: API(dependencies: dependencies), logger: logger)
            do {
                try await app.test(.router) { client in try await body(client, server, logs) }
                try await transport.shutdown()
            } catch {
                try? await transport.shutdown()
                throw error
            }
        }
    }

    @Test func showsAnUpstreamUser() async throws {
        try await withApp { client, server, _ in
            server.stub(.get, "/users/7", try .json(User(id: 7, name: "Ada")))
            try await client.execute(uri: "/users/7", method: .get) { response in
                #expect(response.status == .ok)
                let object = try JSONSerialization.jsonObject(with: Data(String(buffer: response.body).utf8)) as? [String: Any]
                #expect(object?["id"] as? Int == 7)
                #expect(object?["displayName"] as? String == "Ada")
            }
            #expect(server.requests.first?.headerFields[.authorization] == "Bearer upstream-SECRET")
        }
    }

    @Test func listsWithAFilter() async throws {
        try await withApp { client, server, _ in
            server.stub(.get, "/users", try .json([User(id: 1, name: "Ada")]))
            try await client.execute(uri: "/users?name=Ad", method: .get) { response in
                #expect(response.status == .ok)
            }
            #expect(server.requests.first?.query == "nameContains=Ad")
        }
    }

    @Test func upstreamFailuresBecomeStatuses() async throws {
        try await withApp { client, server, _ in
            server.stub(.get, "/users/404", .status(.notFound))
            server.stub(.get, "/users", .status(.serviceUnavailable))
            try await client.execute(uri: "/users/404", method: .get) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/users", method: .get) { #expect($0.status == .badGateway) }
        }
    }

    @Test func loginKeepsThePasswordOutOfTheLogsAndLogsUnderTheRequestID() async throws {
        try await withApp { client, server, logs in
            server.stub(.post, "/sessions", try .json(Session(token: "issued-SECRET", expiresIn: 60)))
            let body = ByteBuffer(string: #"{"username":"ada","password":"pw-SECRET"}"#)
            try await client.execute(uri: "/login", method: .post, headers: [.contentType: "application/json"], body: body) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains("issued-SECRET"))
            }
            #expect(server.requests.first?.bodyText.contains("pw-SECRET") == true)
            let text = logs.entries.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
            #expect(!text.contains("pw-SECRET"))
            #expect(!text.contains("issued-SECRET"))
            #expect(!text.contains("upstream-SECRET"))
            let upstream = try #require(logs.entries.first { $0.message.description == "Sending request" })
            #expect(upstream.metadata["hb.request.id"] != nil)
        }
    }
}
