import Foundation
import HTTPTypes
import InMemoryTracing
import MetricsTestKit
import Resourceful
import ResourcefulTesting
import Testing
import Tracing

@Suite struct ObservabilityTests {
    @Test func metricsAreLabelledByVerbMethodTemplateAndOutcome() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/users/:id", try .json(User(id: 1, name: "Ada")))
            harness.server.stub(.delete, "/v1/users/:id", .status(.notFound))
            let metrics = TestMetrics()
            let api = API(dependencies: harness.dependencies, middlewares: [MetricsMiddleware(factory: metrics)])
            for id in [1, 2, 3] { _ = try await api.call(AdHocRequest<User, Empty>(.show, "users/\(id)")) }
            await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<Empty, Empty>(.delete, "users/\(9)")) }

            let shown = [("verb", "show"), ("method", "GET"), ("path", "users/{}"), ("outcome", "200")]
            #expect(try metrics.expectCounter(MetricsMiddleware.defaultRequestsLabel, shown).totalValue == 3)
            #expect(try metrics.expectTimer(MetricsMiddleware.defaultDurationLabel, shown).values.count == 3)
            #expect(try metrics.expectTimer(MetricsMiddleware.defaultDurationLabel, shown).values.allSatisfy { $0 > 0 })
            let missing = [("verb", "delete"), ("method", "DELETE"), ("path", "users/{}"), ("outcome", "404")]
            #expect(try metrics.expectCounter(MetricsMiddleware.defaultRequestsLabel, missing).totalValue == 1)
            #expect(metrics.counters(label: MetricsMiddleware.defaultRequestsLabel).count == 2)
        }
    }

    @Test func failuresWithoutAResponseAreCountedByKind() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/gone", .closeConnection)
            let metrics = TestMetrics()
            let api = API(dependencies: harness.dependencies, middlewares: [MetricsMiddleware(factory: metrics)])
            await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "gone")) }
            let dimensions = [("verb", "show"), ("method", "GET"), ("path", "gone"), ("outcome", "transport")]
            let counter = try metrics.expectCounter(MetricsMiddleware.defaultRequestsLabel, dimensions)
            #expect(counter.totalValue == 1)
        }
    }

    @Test func aClientSpanPerCallWithItsContextPropagated() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/users/:id", try .json(User(id: 1, name: "Ada")))
            harness.server.stub(.post, "/v1/users", .status(.internalServerError))
            let tracer = InMemoryTracer()
            let api = API(dependencies: harness.dependencies, middlewares: [TracingMiddleware(tracer: tracer)])
            _ = try await api.call(AdHocRequest<User, Empty>(.show, "users/\(42)"))
            await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<Empty, User>(.create, "users", parameters: User(id: 0, name: "x"))) }

            let spans = tracer.finishedSpans
            #expect(spans.map(\.operationName) == ["GET users/{}", "POST users"])
            #expect(spans.allSatisfy { $0.kind == .client })
            #expect(spans[0].attributes["http.request.method"]?.toSpanAttribute() == "GET")
            #expect(spans[0].attributes["url.template"]?.toSpanAttribute() == "users/{}")
            #expect(spans[0].attributes["http.response.status_code"]?.toSpanAttribute() == 200)
            #expect(spans[0].status == nil)
            #expect(spans[1].status?.code == .error)

            let sent = try #require(harness.server.requests.first)
            #expect(sent.headerFields[HTTPField.Name(InMemoryTracer.traceIDKey)!] == spans[0].traceID)
            #expect(sent.headerFields[HTTPField.Name(InMemoryTracer.spanIDKey)!] == spans[0].spanID)
        }
    }

    @Test func theSystemTracerIsUsedWhenNoneIsGiven() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/ping", .status(.noContent))
            let api = API(dependencies: harness.dependencies, middlewares: [TracingMiddleware()])
            // Without a tracer anywhere, a call records nothing and sends no trace header.
            _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "ping"))
            #expect(harness.server.requests.first?.headerFields[HTTPField.Name(InMemoryTracer.traceIDKey)!] == nil)
            // The tracer `InstrumentationSystem` hands out (here bound to the task, as a
            // bootstrapped one would be to the process) gets the span.
            let tracer = InMemoryTracer()
            try await withTracer(tracer) {
                _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "ping"))
            }
            #expect(tracer.finishedSpans.map(\.operationName) == ["GET ping"])
            #expect(harness.server.requests.last?.headerFields[HTTPField.Name(InMemoryTracer.traceIDKey)!] == tracer.finishedSpans.first?.traceID)
        }
    }

    @Test func callsInsideASpanBecomeItsChildren() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/ping", .status(.noContent))
            let tracer = InMemoryTracer()
            let api = API(dependencies: harness.dependencies, middlewares: [TracingMiddleware(tracer: tracer)])
            try await tracer.withSpan("handle request") { _ in
                _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "ping"))
            }
            let spans = tracer.finishedSpans
            let parent = try #require(spans.first { $0.operationName == "handle request" })
            let child = try #require(spans.first { $0.operationName == "GET ping" })
            #expect(child.traceID == parent.traceID)
            #expect(child.parentSpanID == parent.spanID)
        }
    }

    @Test func defaultMiddlewaresTraceMeasureAndLog() {
        let kinds = API.defaultMiddlewares.map { "\(type(of: $0))" }
        #expect(kinds == ["TracingMiddleware", "MetricsMiddleware", "RetryMiddleware", "CircuitBreakerMiddleware", "RateLimitMiddleware", "CredentialRefreshMiddleware", "LoggingMiddleware", "RedirectMiddleware"])
    }
}
