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
    /// The app with its APIs pointed at `server` (users) and at a second MockServer (billing), one
    /// client between them, and credentials swapped for in-memory ones.
    private func withApp(
        _ body: @Sendable (any TestClientProtocol, MockServer, InMemoryLogHandler) async throws -> Void
    ) async throws {
        try await withApps { client, users, _, logs in try await body(client, users, logs) }
    }

    private func withApps(
        _ body: @Sendable (any TestClientProtocol, MockServer, MockServer, InMemoryLogHandler) async throws -> Void
    ) async throws {
        try await MockServer.withRunning { server in
            try await MockServer.withRunning { billingServer in
                let transport = AsyncHTTPClientTransport()
                let logs = InMemoryLogHandler()
                var logger = Logger(label: "test") { _ in logs }
                logger.logLevel = .debug
                let storage = InMemoryAuthenticationStorage(["upstream": "Bearer upstream-SECRET", "billing": "Bearer billing-SECRET"])
                let api = API(dependencies: APIDependencies(
                    apiConfig: APIConfig(baseURL: server.baseURL, service: "upstream"),
                    authenticationStorage: storage, transport: transport, logger: logger
                ))
                let billing = API(dependencies: APIDependencies(
                    apiConfig: APIConfig(baseURL: billingServer.baseURL.appendingPathComponent("v2"), service: "billing"),
                    authenticationStorage: storage, transport: transport, logger: logger
                ))
                let app = buildApplication(api: api, billing: billing, logger: logger)
                do {
                    try await app.test(.router) { client in try await body(client, server, billingServer, logs) }
                    try await transport.shutdown()
                } catch {
                    try? await transport.shutdown()
                    throw error
                }
            }
        }
    }

    @Test func callsTheSecondUpstreamWithItsOwnCredential() async throws {
        try await withApps { client, users, billing, logs in
            billing.stub(.get, "/v2/invoices", .json(raw: #"[{"id":"in_1","amountCents":1250}]"#))
            try await client.execute(uri: "/users/7/invoices", method: .get) { response in
                #expect(response.status == .ok)
                let array = try JSONSerialization.jsonObject(with: Data(String(buffer: response.body).utf8)) as? [[String: Any]]
                #expect(array?.first?["amount"] as? Double == 12.5)
            }
            #expect(billing.requests.first?.query == "customer=7")
            #expect(billing.requests.first?.headerFields[.authorization] == "Bearer billing-SECRET")
            #expect(users.requests.isEmpty)
            #expect(!logs.entries.contains { "\($0.message) \($0.metadata)".contains("billing-SECRET") })
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
