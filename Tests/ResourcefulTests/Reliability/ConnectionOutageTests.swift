import Foundation
import HTTPTypes
import MetricsTestKit
import Resourceful
import ResourcefulTesting
import Testing

/// A server that is down: each attempt fails at once, so the retry policy acts within the call's
/// deadline, and a deadline that passes while anything is in flight is a time-out.
@Suite struct ConnectionOutageTests {
    @Test func refusedConnectionsAreTriedAgainWithinTheBudgetAndTheDeadline() async throws {
        let timeout = Duration.seconds(120)
        try await Harness.run(configure: {
            $0.timeout = timeout
            $0.retry = .init(maxAttempts: 3, baseDelay: .milliseconds(20), maxDelay: .milliseconds(50))
            $0.http.connectRetryBudget = .milliseconds(500)
            $0.http.connectTimeout = timeout * 2
        }) { harness in
            let closed = try await MockServer.start()
            let url = closed.baseURL
            try await closed.shutdown()
            harness.dependencies.apiConfig.baseURL = url
            // The connect time-out is longer than the call: each connection still ends at the
            // refusal, not at the deadline.
            #expect(harness.dependencies.apiConfig.http.connectTimeout > harness.dependencies.apiConfig.timeout)
            let start = ContinuousClock.now
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x")) }
            #expect(error?.kind == .transport)
            #expect(error?.description.contains("\(url.host ?? "")") == true)
            #expect(harness.attemptsLogged == 1)
            // Ended by the budget (500 ms), not by the deadline: half of it leaves a loaded
            // machine room.
            #expect(ContinuousClock.now - start < timeout / 2)
        }
    }

    @Test func aBudgetLongerThanTheCallEndsAtTheDeadline() async throws {
        let deadline = Duration.milliseconds(700)
        let budget = Duration.seconds(600)
        try await Harness.run(configure: {
            $0.timeout = deadline
            $0.http.connectRetryBudget = budget
        }) { harness in
            let closed = try await MockServer.start()
            let url = closed.baseURL
            try await closed.shutdown()
            harness.dependencies.apiConfig.baseURL = url
            let start = ContinuousClock.now
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x")) }
            // Refused to the last, or a last wait that a loaded machine drew out past the deadline.
            #expect(error?.kind == .transport || error?.kind == .timeout)
            // Ended at the deadline, not at the budget: a few times the deadline and a minute
            // for a loaded machine, a tenth of the budget.
            #expect(ContinuousClock.now - start < deadline * 10 + .seconds(60))
        }
    }

    /// A transport that fails with a connection error only after the deadline has passed.
    struct LateFailure: Error {}

    @Test func aConnectionFailureAfterTheDeadlineIsATimeoutInErrorAndMetrics() async throws {
        let metrics = TestMetrics()
        let config = APIConfig(baseURL: URL(string: "http://127.0.0.1:9/v1")!, service: "s", timeout: .milliseconds(100))
        let slow = StubTransport { request in
            try await Task.sleep(until: request.deadline + .milliseconds(100), clock: .continuous)
            throw LateFailure()
        }
        let api = API(dependencies: APIDependencies(apiConfig: config, transport: slow), middlewares: [MetricsMiddleware(factory: metrics), RetryMiddleware()])
        let error = await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "x")) }
        #expect(error?.kind == .timeout)
        #expect(error?.underlying is LateFailure)
        let counter = try metrics.expectCounter(MetricsMiddleware.defaultRequestsLabel, [("verb", "show"), ("method", "GET"), ("path", "x"), ("outcome", "timeout")])
        #expect(counter.totalValue == 1)
    }
}
