import Foundation
import HTTPTypes
import Logging
import Resourceful
import ResourcefulTesting
import Testing

/// The README's code samples, compiled and run against a MockServer.
@Suite struct ReadmeSamplesTests {
    enum Readme {
        struct User: Codable, Sendable { let id: Int; var name: String }

        struct ShowUser: ResourceRequest {
            typealias ResourceType = User
            let verb = ResourceVerb.show
            let path: ResourcePath
            init(id: Int) { path = "users/\(id)" }
        }

        struct SearchUsers: ResourceRequest {
            typealias ResourceType = [User]
            struct Parameters: Encodable, Sendable {
                var name: String
                var tags: [String]
                var filter: Filter?
                struct Filter: Encodable, Sendable { var minAge: Int }
            }
            let verb = ResourceVerb.index
            let path: ResourcePath = "users"
            let parameters: Parameters
        }

        struct Session: Codable, Sendable { var token: String }

        struct Login: ResourceRequest {
            typealias ResourceType = Session
            struct Parameters: Encodable, Sendable { var user: String; var password: String }
            let verb = ResourceVerb.create
            let path: ResourcePath = "sessions"
            let parameters: Parameters
            var shouldRedactRequestBody: Bool { true }
        }

        struct Report: Codable, Sendable { var rows: [Int] }

        struct ExportReport: ResourceRequest {
            typealias ResourceType = Report
            let verb = ResourceVerb.show
            let path: ResourcePath = "reports/latest"
            func configure(_ options: inout RequestOptions) {
                options.timeout = .seconds(120)
                options.maxResponseBytes = 64 * 1024 * 1024
            }
        }

        struct Refresher: CredentialRefresher {
            func refreshCredential(for service: String) async throws -> String { "Bearer refreshed" }
        }

        static func middlewares(myRefresher: any CredentialRefresher) -> [any APIMiddleware] {
            [
                TracingMiddleware(spanName: { request, context in "billing \(context.pathTemplate)" }),
                MetricsMiddleware(requestsLabel: "billing.requests", durationLabel: "billing.request.duration"),
                RetryMiddleware(policy: APIConfig.RetryPolicy(maxAttempts: 5)),  // else each call's options
                CredentialRefreshMiddleware(refresher: myRefresher),
                LoggingMiddleware(level: .debug, headers: .only([.contentType, .retryAfter]), logsResponseBody: false),
                RedirectMiddleware(),
            ]
        }

        struct AppDependencies: API.Dependencies {
            var apiConfig: APIConfig
            var authenticationStorage: any AuthenticationStorage
            var transport: any HTTPTransport
            var requestEncoder: any RequestEncoder
            var responseDecoder: any ResponseDecoder
            var logger: Logger
        }
    }

    @Test func definedAndCalledThroughLiveDependencies() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/users/42", try .json(Readme.User(id: 42, name: "Ada")))
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let json = #"{"baseURL": "\#(server.baseURL.absoluteString)", "service": "example-api"}"#
            try Data(json.utf8).write(to: directory.appendingPathComponent("development.json"))

            let api = API(
                dependencies: try await APIDependencies.live(
                    environment: "development", configDirectory: directory.path, environmentVariables: [:]
                )
            )
            let user = try await api.call(Readme.ShowUser(id: 42))
            try await api.shutdown()
            #expect(user.name == "Ada")
        }
    }

    @Test func queryFormAsDocumented() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/users", .json(raw: "[]"))
            let search = Readme.SearchUsers(parameters: .init(name: "Ada", tags: ["a", "b"], filter: .init(minAge: 30)))
            _ = try await harness.api.call(search)
            let recorded = try #require(harness.server.requests.first)
            #expect(recorded.query == "name=Ada&tags%5B%5D=a&tags%5B%5D=b&filter%5BminAge%5D=30")
            #expect(recorded.query.removingPercentEncoding == "name=Ada&tags[]=a&tags[]=b&filter[minAge]=30")
        }
    }

    @Test func adHocAndLoginAndOwnContainer() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/users", .json(raw: #"[{"id":1,"name":"A"}]"#))
            harness.server.stub(.post, "/v1/sessions", .json(raw: #"{"token":"t"}"#))
            let deps = harness.dependencies
            let own = Readme.AppDependencies(
                apiConfig: deps.apiConfig,
                authenticationStorage: InMemoryAuthenticationStorage(["test-api": "Bearer test-token"]),
                transport: deps.transport,
                requestEncoder: deps.requestEncoder,
                responseDecoder: deps.responseDecoder,
                logger: deps.logger
            )
            let api = API(dependencies: own)
            let users = try await api.call(AdHocRequest<[Readme.User], _>(.index, "users", parameters: ["page": 2]))
            let session = try await api.call(Readme.Login(parameters: .init(user: "ada", password: "pw-readme")))
            #expect(users.count == 1)
            #expect(session.token == "t")
            #expect(harness.server.requests.first?.query == "page=2")
            #expect(harness.server.requests.last?.headerFields[.authorization] == "Bearer test-token")
            #expect(!harness.logText.contains("pw-readme"))
        }
    }

    @Test func mockServerSample() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/users/42", try .json(Readme.User(id: 42, name: "Ada")))
            server.stub(.get, "/flaky", .status(.serviceUnavailable), .status(.ok))
            server.route(.post, "/users") { request in .json(raw: request.body, status: .created) }
            var deps = APIDependencies(
                apiConfig: APIConfig(baseURL: server.baseURL, service: "example-api"),
                transport: AsyncHTTPClientTransport()
            )
            deps.authenticationStorage = InMemoryAuthenticationStorage(["example-api": "Bearer test-token"])
            let api = API(dependencies: deps)
            // The 503 is retried: the call succeeds on the second attempt.
            _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "flaky"))
            let created = try await api.call(AdHocRequest<Readme.User, Readme.User>(.create, "users", parameters: .init(id: 7, name: "New")))
            try await api.shutdown()
            #expect(server.requests.prefix(2).map(\.path) == ["/flaky", "/flaky"])
            #expect(created.id == 7)
            #expect(server.requests.map(\.headerFields[.authorization]) == Array(repeating: "Bearer test-token", count: 3))
        }
    }

    @Test func optionsAndOwnMiddlewareList() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/reports/latest", .status(.serviceUnavailable), .status(.unauthorized), .json(raw: #"{"rows":[1,2]}"#))
            let api = API(dependencies: harness.dependencies, middlewares: Readme.middlewares(myRefresher: Readme.Refresher()))
            #expect(api.defaultOptions.timeout == harness.dependencies.apiConfig.timeout)
            let report = try await api.call(Readme.ExportReport())
            #expect(report.rows == [1, 2])
            // Retried once, refreshed once.
            #expect(harness.server.requests.map { $0.headerFields[.authorization] } == [Harness.token, Harness.token, "Bearer refreshed"])
            let request = try await api.transportRequest(for: Readme.ExportReport())
            #expect(request.maxResponseBytes == 64 * 1024 * 1024)
        }
    }
}
