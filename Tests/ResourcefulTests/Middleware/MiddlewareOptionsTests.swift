import Foundation
import HTTPTypes
import InMemoryLogging
import InMemoryTracing
import Logging
import MetricsTestKit
import Resourceful
import ResourcefulTesting
import Testing
import Tracing

/// The built-in middlewares are public building blocks: each one's options change what it does,
/// and a list of them in another order still works.
@Suite struct MiddlewareOptionsTests {
    @Test func loggingWritesOnlyTheSelectedHeadersAndBodies() async throws {
        try await Harness.run { harness in
            harness.server.stub(.post, "/v1/users", try .json(User(id: 7, name: "Ada")))
            let logging = LoggingMiddleware(headers: .only([.contentType]), logsRequestBody: true, logsResponseBody: false)
            let api = API(dependencies: harness.dependencies, middlewares: [RetryMiddleware(), logging, RedirectMiddleware()])
            _ = try await api.call(AdHocRequest<User, User>(.create, "users", parameters: User(id: 0, name: "Grace")))
            let sending = try #require(harness.logs.entries.first { $0.message.description == "Sending request" })
            guard case .dictionary(let headers) = sending.metadata["resourceful.request.headers"] else {
                Issue.record("no request headers logged")
                return
            }
            #expect(Array(headers.keys) == ["content-type"])
            let received = try #require(harness.logs.entries.first { $0.message.description == "Received response" })
            // A body is written with the answer, once the steps after the logging one had their say.
            #expect(received.metadata["resourceful.request.body"]?.description.contains("Grace") == true)
            #expect(received.metadata["resourceful.response.body"] == nil)
            #expect(received.metadata["resourceful.response.headers"] != nil)
            #expect(harness.logsAreFreeOfSecrets)
        }
    }

    @Test func loggingWithoutHeadersNamesNone() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/users/1", try .json(User(id: 1, name: "Ada")))
            let api = API(dependencies: harness.dependencies, middlewares: [LoggingMiddleware(headers: .none), RedirectMiddleware()])
            _ = try await api.call(AdHocRequest<User, Empty>(.show, "users/1"))
            #expect(harness.logs.entries.count == 2)
            #expect(harness.logs.entries.allSatisfy { $0.metadata["resourceful.request.headers"] == nil && $0.metadata["resourceful.response.headers"] == nil })
        }
    }

    @Test func metricsAndSpansTakeTheirNamesFromTheOptions() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/users/1", try .json(User(id: 1, name: "Ada")))
            let metrics = TestMetrics()
            let tracer = InMemoryTracer()
            let api = API(
                dependencies: harness.dependencies,
                middlewares: [
                    MetricsMiddleware(requestsLabel: "billing.calls", durationLabel: "billing.call.time", factory: metrics),
                    TracingMiddleware(tracer: tracer, spanName: { _, context in "billing \(context.pathTemplate)" }),
                ]
            )
            _ = try await api.call(AdHocRequest<User, Empty>(.show, "users/\(1)"))
            #expect(metrics.counters(label: "billing.calls").count == 1)
            #expect(metrics.timers(label: "billing.call.time").count == 1)
            #expect(metrics.counters(label: MetricsMiddleware.defaultRequestsLabel).isEmpty)
            #expect(tracer.finishedSpans.map(\.operationName) == ["billing users/{}"])
        }
    }

    @Test func aRetryStepWithItsOwnPolicyOverridesTheCalls() async throws {
        try await Harness.run(configure: { $0.retry.maxAttempts = 1; $0.retry.baseDelay = .milliseconds(1) }) { harness in
            harness.server.stub(.get, "/v1/flaky", .status(.serviceUnavailable), .status(.serviceUnavailable), .json(raw: "[]"))
            var policy = APIConfig.RetryPolicy()
            policy.maxAttempts = 3
            policy.baseDelay = .milliseconds(1)
            policy.maxDelay = .milliseconds(5)
            let api = API(dependencies: harness.dependencies, middlewares: [RetryMiddleware(policy: policy), RedirectMiddleware()])
            let value = try await api.call(AdHocRequest<[Int], Empty>(.index, "flaky"))
            #expect(value == [])
            #expect(harness.server.requests.count == 3)
        }
    }
}
