import Foundation
import HTTPTypes
import InMemoryLogging
import Logging
import MetricsTestKit
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

/// An upstream that keeps failing is not called while its breaker is open: calls fail at once
/// without a connection, exactly the policy's probes go after the interval, and the breaker
/// closes once the upstream is back (nginx stopped and started again).
@Suite struct CircuitBreakerMiddlewareTests {
    struct Tick: Codable, Sendable { var n: Int }
    static let ticks = AdHocRequest<Tick, Empty>(.show, "ticks")
    static let policy = CircuitBreakerPolicy(failureRatio: 0.5, minimumCalls: 5, window: .seconds(60), openInterval: .seconds(1), probes: 2)

    @Test func anUpstreamAnswering503OpensTheBreakerAndItsProbesCloseIt() async throws {
        try await Harness.run(configure: { $0.retry.maxAttempts = 1; $0.limits.breaker = Self.policy }) { harness in
            let healthy = Locked(false)
            harness.server.route(.get, "/v1/ticks") { _ in
                guard healthy.withLock({ $0 }) else { return .json(raw: "{}", status: .serviceUnavailable) }
                // Slow enough that every call of the burst below asks while the probes are out.
                var answer = MockResponse.json(raw: #"{"n": 1}"#)
                answer.delay = .milliseconds(500)
                return answer
            }
            let api = harness.api
            for _ in 0..<5 {
                let error = await #expect(throws: APIError.self) { _ = try await api.call(Self.ticks) }
                #expect(error?.status == .serviceUnavailable)
            }
            #expect(harness.server.requests.count == 5)
            // The breaker opened while the fifth call was counted: probes go from one open
            // interval after this at the latest.
            let probesFrom = ContinuousClock.now + Self.policy.openInterval
            let connections = harness.server.connectionCount
            // Open: refused at once, without a connection, and not retried.
            for _ in 0..<20 {
                let error = await #expect(throws: APIError.self) { _ = try await api.call(Self.ticks) }
                #expect(error?.kind == .circuitOpen)
                #expect(error?.detail?.contains("after 5 of 5 calls failed") == true, "\(String(describing: error))")
            }
            #expect(harness.server.requests.count == 5)
            #expect(harness.server.connectionCount == connections)
            #expect(harness.logs.entries.filter { $0.message.description == "Circuit opened" }.count == 1)

            // After the interval, the upstream is back: of ten calls at once exactly the two
            // probes reach it, and once both succeed the breaker closes.
            healthy.withLock { $0 = true }
            try await ContinuousClock().sleep(until: probesFrom)
            let outcomes = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<10 { group.addTask { (try? await api.call(Self.ticks)) != nil } }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(harness.server.requests.count == 5 + outcomes.filter { $0 }.count)
            #expect(outcomes.filter { $0 }.count == 2, "\(outcomes)")
            _ = try await api.call(Self.ticks)
            #expect(harness.logs.entries.filter { $0.message.description == "Circuit closed" }.count == 1)
        }
    }

    /// An app's step that sends the request to its origin with user information written in.
    struct UserInformationStep: APIMiddleware {
        func intercept(
            _ request: TransportRequest, context: CallContext,
            next: (TransportRequest, CallContext) async throws -> TransportResponse
        ) async throws -> TransportResponse {
            var request = request
            request.url = request.url.replacingOccurrences(of: "http://", with: "http://ada:breaker-pw-3d1@")
            return try await next(request, context)
        }
    }

    @Test func anOpenBreakersErrorNamesTheOriginWithoutUserInformation() async throws {
        try await Harness.run(configure: { $0.retry.maxAttempts = 1; $0.limits.breaker = Self.policy }) { harness in
            harness.server.stub(.get, "/v1/ticks", .json(raw: "{}", status: .serviceUnavailable))
            let api = API(dependencies: harness.dependencies, middlewares: [UserInformationStep()] + API.defaultMiddlewares)
            for _ in 0..<5 { _ = try? await api.call(Self.ticks) }
            let error = await #expect(throws: APIError.self) { _ = try await api.call(Self.ticks) }
            #expect(error?.kind == .circuitOpen)
            #expect(error?.detail?.contains("at http://127.0.0.1:\(harness.server.port) is open") == true)
            #expect(error.map { "\($0)" }?.contains("breaker-pw-3d1") == false)
            #expect(error.map { "\($0)" }?.contains("ada") == false)
        }
    }

    @Test func anUpstreamThatAnswersSlowlyOpensTheBreaker() async throws {
        // Slow: an answer after 300 ms, three times the policy's 100 ms.
        let policy = CircuitBreakerPolicy(
            minimumCalls: 3, openInterval: .seconds(60), windowCalls: 3, slowCallDuration: .milliseconds(100), slowCallRatio: 1)
        try await Harness.run(configure: { $0.retry.maxAttempts = 1; $0.limits.breaker = policy }) { harness in
            harness.server.route(.get, "/v1/ticks") { _ in
                var answer = MockResponse.json(raw: #"{"n": 1}"#)
                answer.delay = .milliseconds(300)
                return answer
            }
            let api = harness.api
            // Each answers, slowly: the third slow call of three opens the breaker.
            for _ in 0..<3 { _ = try await api.call(Self.ticks) }
            let error = await #expect(throws: APIError.self) { _ = try await api.call(Self.ticks) }
            #expect(error?.kind == .circuitOpen)
            #expect(harness.server.requests.count == 3)
            #expect(harness.logs.entries.filter { $0.message.description == "Circuit opened" }.count == 1)
        }
    }

    @Test func slowCallKeysAreCheckedTogether() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("breaker-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"baseURL": "http://127.0.0.1:9/", "service": "s", "limits": {"breaker": {"slowCallRatio": 0.5}}}"#.utf8).write(to: file)
        let error = await #expect(throws: APIError.self) { _ = try await APIConfig.load(file: file.path, environmentVariables: [:]) }
        #expect(error?.kind == .invalidConfiguration)
        #expect(error?.description.contains("slowCallDuration") == true, "\(String(describing: error))")
    }

    @Test func changesAndRefusalsAreCountedByService() async throws {
        try await Harness.run(configure: { $0.retry.maxAttempts = 1 }) { harness in
            harness.server.stub(.get, "/v1/ticks", .json(raw: "{}", status: .badGateway))
            let metrics = TestMetrics()
            let api = API(dependencies: harness.dependencies, middlewares: [CircuitBreakerMiddleware(policy: Self.policy, metrics: metrics)])
            for _ in 0..<8 { _ = try? await api.call(Self.ticks) }
            let opened = try metrics.expectCounter("resourceful.breaker.transitions", [("service", Harness.service), ("state", "open")])
            let refused = try metrics.expectCounter("resourceful.breaker.refused", [("service", Harness.service)])
            #expect(opened.totalValue == 1)
            #expect(refused.totalValue == 3)
        }
    }

    @Test func aBreakerIsLeftOutOfTheChainUnlessConfigured() async throws {
        try await Harness.run(configure: { $0.retry.maxAttempts = 1 }) { harness in
            harness.server.stub(.get, "/v1/ticks", .json(raw: "{}", status: .serviceUnavailable))
            let api = harness.api
            for _ in 0..<30 { _ = try? await api.call(Self.ticks) }
            #expect(harness.server.requests.count == 30)
        }
    }

    @Test func fourHundredsNeverOpenIt() async throws {
        try await Harness.run(configure: { $0.retry.maxAttempts = 1; $0.limits.breaker = Self.policy }) { harness in
            harness.server.stub(.get, "/v1/ticks", .json(raw: "{}", status: .notFound))
            let api = harness.api
            for _ in 0..<20 { _ = try? await api.call(Self.ticks) }
            #expect(harness.server.requests.count == 20)
        }
    }

    @Test func aRestartedNginxClosesTheBreakerAgain() async throws {
        var nginx = try await Nginx.start(server: "location /v1/ { }") { nginx in
            let folder = nginx.root.appendingPathComponent("v1")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(#"{"n": 1}"#.utf8).write(to: folder.appendingPathComponent("ticks"))
            try nginx.makeReadable()
        }
        do {
            var config = APIConfig(baseURL: try #require(URL(string: "http://127.0.0.1:\(nginx.port)/v1")), service: "nginx")
            config.retry.maxAttempts = 1
            config.http.connectRetryBudget = .zero
            config.limits.breaker = Self.policy
            try await AsyncHTTPClientTransport.withTransport(settings: config.http) { transport in
                let api = API(dependencies: APIDependencies(apiConfig: config, authenticationStorage: InMemoryAuthenticationStorage(), transport: transport))
                _ = try await api.call(Self.ticks)
                try await nginx.halt()
                // With the call before, five calls: four refused connections open the breaker.
                for _ in 0..<4 {
                    let error = await #expect(throws: APIError.self) { _ = try await api.call(Self.ticks) }
                    #expect(error?.kind == .transport)
                }
                let refused = await #expect(throws: APIError.self) { _ = try await api.call(Self.ticks) }
                #expect(refused?.kind == .circuitOpen)
                // Opened by the fourth refused connection, before this: probes go from here.
                let probesFrom = ContinuousClock.now + Self.policy.openInterval
                try await nginx.resume()
                try await ContinuousClock().sleep(until: probesFrom)
                // The two probes succeed; every call after them goes through.
                for _ in 0..<4 { _ = try await api.call(Self.ticks) }
            }
            #expect(await nginx.requestCount(reaching: 5) == 5)
            try await nginx.stop()
        } catch {
            try? await nginx.stop()
            throw error
        }
    }
}
