import Foundation
import HTTPTypes
import InMemoryLogging
import Logging
import Resourceful
import ResourcefulTesting
import Testing
import UpstreamUsers
import VaporApp
import VaporTesting

@Suite struct VaporAppTests {
    /// The app with its API pointed at `server`, credentials in memory, logs kept.
    private func withConfiguredApp(
        _ body: (Application, MockServer, InMemoryLogHandler) async throws -> Void
    ) async throws {
        try await MockServer.withRunning { server in
            let logs = InMemoryLogHandler()
            var logger = Logger(label: "test") { _ in logs }
            logger.logLevel = .debug
            let api = API(
                dependencies: APIDependencies(
                    apiConfig: APIConfig(baseURL: server.baseURL, service: "upstream"),
                    authenticationStorage: InMemoryAuthenticationStorage(["upstream": "Bearer upstream-SECRET"]),
                    transport: AsyncHTTPClientTransport(),
                    logger: logger
                )
            )
            try await withApp(configure: { app in
                app.logger = logger
                try configure(app, api: api)
            }) { app in
                try await body(app, server, logs)
            }
            let afterShutdown = await #expect(throws: APIError.self) { _ = try await api.call(ShowUser(id: 1)) }
            #expect(afterShutdown?.kind == .transport)
        }
    }

    @Test func showsAnUpstreamUser() async throws {
        try await withConfiguredApp { app, server, _ in
            server.stub(.get, "/users/7", try .json(User(id: 7, name: "Ada")))
            try await app.testing().test(.GET, "users/7") { response in
                #expect(response.status == .ok)
                let body = try response.content.decode(UserResponseBody.self)
                #expect(body == UserResponseBody(id: 7, displayName: "Ada"))
            }
            #expect(server.requests.first?.headerFields[.authorization] == "Bearer upstream-SECRET")
        }
    }

    @Test func upstreamFailuresBecomeStatuses() async throws {
        try await withConfiguredApp { app, server, _ in
            server.stub(.get, "/users/404", .status(.notFound))
            server.stub(.get, "/users", .status(.serviceUnavailable))
            try await app.testing().test(.GET, "users/404") { #expect($0.status == .notFound) }
            try await app.testing().test(.GET, "users") { #expect($0.status == .badGateway) }
        }
    }

    @Test func loginLogsUnderTheRequestIDWithoutThePassword() async throws {
        try await withConfiguredApp { app, server, logs in
            server.stub(.post, "/sessions", try .json(Session(token: "issued-SECRET", expiresIn: 60)))
            try await app.testing().test(
                .POST, "login",
                beforeRequest: { request in
                    try request.content.encode(["username": "ada", "password": "pw-SECRET"], as: .json)
                },
                afterResponse: { response in
                    #expect(response.status == .ok)
                }
            )
            #expect(server.requests.first?.bodyText.contains("pw-SECRET") == true)
            let text = logs.entries.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
            #expect(!text.contains("pw-SECRET"))
            #expect(!text.contains("issued-SECRET"))
            #expect(!text.contains("upstream-SECRET"))
            let upstream = try #require(logs.entries.first { $0.message.description == "Sending request" })
            #expect(upstream.metadata["request-id"] != nil)
        }
    }

    struct UserResponseBody: Codable, Equatable {
        var id: Int
        var displayName: String
    }
}
