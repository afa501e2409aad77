import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

/// A request's settings reach the call through one value: the API's defaults, then the
/// request's requirements, then its `configure(_:)`.
@Suite struct RequestOptionsTests {
    struct Report: Codable, Sendable { var rows: [Int] }

    /// A request that sets options the protocol has no requirement for.
    struct ExportReport: ResourceRequest {
        typealias ResourceType = Report
        let verb = ResourceVerb.show
        let path: ResourcePath = "reports/latest"
        var limit: Int
        func configure(_ options: inout RequestOptions) {
            options.maxResponseBytes = limit
        }
    }

    /// Sees the options of each call.
    struct Capture: APIMiddleware {
        let seen: Locked<[RequestOptions]>
        func intercept(
            _ request: TransportRequest, context: CallContext,
            next: (TransportRequest, CallContext) async throws -> TransportResponse
        ) async throws -> TransportResponse {
            seen.withLock { $0.append(context.options) }
            return try await next(request, context)
        }
    }

    @Test func configureRunsLastAndReachesTheTransport() async throws {
        try await Harness.run { harness in
            let body = try JSONEncoder().encode(Report(rows: Array(0..<200)))
            harness.server.stub(.get, "/v1/reports/latest", .json(raw: body), .json(raw: body))
            // Under the configured cap (10 MiB) the answer fits; under the request's own, it does not.
            let roomy = try await harness.api.call(ExportReport(limit: body.count))
            #expect(roomy.rows.count == 200)
            await #expect { try await harness.api.call(ExportReport(limit: body.count - 1)) } throws: { error in
                (error as? APIError)?.kind == .responseTooLarge
            }
        }
    }

    @Test func theRequestsRequirementsOverrideTheConfiguration() async throws {
        let seen = Locked<[RequestOptions]>([])
        try await Harness.run(configure: { $0.retry.maxAttempts = 5; $0.timeout = .seconds(40) }) { harness in
            harness.server.stub(.post, "/v1/logins", .status(.noContent))
            harness.server.stub(.get, "/v1/things", .json(raw: "[]"))
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [Capture(seen: seen)])
            var login = AdHocRequest<Empty, [String: String]>(.create, "logins", parameters: ["password": "x"])
            login.shouldRedactRequestBody = true
            login.timeout = .seconds(33)
            _ = try await api.call(login)
            _ = try await api.call(AdHocRequest<[Int], Empty>(.index, "things"))
        }
        let options = seen.withLock { $0 }
        try #require(options.count == 2)
        #expect(options[0].shouldRedactRequestBody)
        #expect(options[0].timeout == .seconds(33))
        #expect(!options[0].allowsRetries)
        #expect(!options[1].shouldRedactRequestBody)
        #expect(options[1].timeout == .seconds(40))
        #expect(options[1].allowsRetries)
        #expect(options[1].retryPolicy.maxAttempts == 5)
        #expect(options[1].service == Harness.service)
    }

    @Test func aMiddlewareMayChangeTheOptionsOfTheStepsAfterIt() async throws {
        struct NoRetries: APIMiddleware {
            func intercept(
                _ request: TransportRequest, context: CallContext,
                next: (TransportRequest, CallContext) async throws -> TransportResponse
            ) async throws -> TransportResponse {
                var context = context
                context.options.allowsRetries = false
                return try await next(request, context)
            }
        }
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/things", .status(.serviceUnavailable), .json(raw: "[]"))
            let api = API(dependencies: harness.dependencies, middlewares: [NoRetries()] + API.defaultMiddlewares)
            await #expect { try await api.call(AdHocRequest<[Int], Empty>(.index, "things")) } throws: { error in
                (error as? APIError)?.status == .serviceUnavailable
            }
            #expect(harness.server.requests.count == 1)
        }
    }
}
