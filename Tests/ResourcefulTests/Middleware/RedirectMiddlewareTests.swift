import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

/// The redirect step is a middleware like the others: it names the hops it followed, takes its
/// limit from the call's options, and is absent from a list that leaves it out.
@Suite struct RedirectMiddlewareTests {
    private static func stubTwoHops(_ harness: Harness) {
        let base = harness.server.baseURL.absoluteString
        harness.server.stub(.get, "/v1/old", MockResponse(status: .movedPermanently, headerFields: [.location: "\(base)/v1/older?x=1"]))
        harness.server.stub(.get, "/v1/older", MockResponse(status: .found, headerFields: [.location: "/v1/new"]))
        harness.server.stub(.get, "/v1/new", .json(raw: "{}"))
    }

    /// Sees what comes back from the steps after it.
    struct Capture: APIMiddleware {
        let seen: Locked<[TransportResponse]>
        func intercept(
            _ request: TransportRequest, context: CallContext,
            next: (TransportRequest, CallContext) async throws -> TransportResponse
        ) async throws -> TransportResponse {
            let response = try await next(request, context)
            seen.withLock { $0.append(response) }
            return response
        }
    }

    @Test func theResponseNamesTheTargetsThatRedirectedIt() async throws {
        try await Harness.run { harness in
            Self.stubTwoHops(harness)
            let seen = Locked<[TransportResponse]>([])
            let api = API(dependencies: harness.dependencies, middlewares: [Capture(seen: seen)] + API.defaultMiddlewares)
            _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "old"))
            let response = try #require(seen.value.first)
            #expect(response.redirects.map(\.path) == ["old", "older"])
            #expect(response.redirects.last?.encodedQuery == "x=1")
            #expect(harness.server.requests.map(\.path) == ["/v1/old", "/v1/older", "/v1/new"])
        }
    }

    @Test func eachHopPassesTheMiddlewaresAfterIt() async throws {
        try await Harness.run { harness in
            Self.stubTwoHops(harness)
            let seen = Locked<[TransportResponse]>([])
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [Capture(seen: seen)])
            _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "old"))
            #expect(seen.value.map(\.status.code) == [301, 302, 200])
            #expect(seen.value.allSatisfy { $0.redirects.isEmpty })
        }
    }

    @Test func aRequestMayFollowNoRedirect() async throws {
        struct NoRedirects: ResourceRequest {
            typealias ResourceType = Empty
            let verb = ResourceVerb.show
            let path: ResourcePath = "old"
            func configure(_ options: inout RequestOptions) { options.maxRedirects = 0 }
        }
        try await Harness.run { harness in
            Self.stubTwoHops(harness)
            let error = await #expect(throws: APIError.self) { try await harness.api.call(NoRedirects()) }
            #expect(error?.kind == .unacceptableStatus)
            #expect(error?.status == .movedPermanently)
            #expect(harness.server.requests.count == 1)
        }
    }

    @Test func aListWithoutTheRedirectStepFollowsNone() async throws {
        try await Harness.run { harness in
            Self.stubTwoHops(harness)
            let api = API(dependencies: harness.dependencies, middlewares: [RetryMiddleware(), LoggingMiddleware()])
            let error = await #expect(throws: APIError.self) { try await api.call(AdHocRequest<Empty, Empty>(.show, "old")) }
            #expect(error?.status == .movedPermanently)
            #expect(harness.server.requests.count == 1)
        }
    }
}
