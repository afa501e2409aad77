import Foundation
import HTTPTypes
import InMemoryLogging
import Logging
import InMemoryTracing
import MetricsTestKit
import NIOCore
import Resourceful
import ResourcefulTesting
import Testing
import Tracing

/// The steps around the transport see a stream as one call that lasts until its last byte.
@Suite struct StreamPipelineTests {
    static func export(_ harness: Harness) {
        var response = MockResponse(headerFields: [.contentLength: "3000", .cacheControl: "max-age=600"])
        response.parts = Array(repeating: Data(repeating: 7, count: 1000), count: 3)
        harness.server.stub(.get, "/v1/export", response)
    }

    @Test func metricsAndTheSpanCoverTheWholeStream() async throws {
        try await Harness.run { harness in
            Self.export(harness)
            let metrics = TestMetrics()
            let tracer = InMemoryTracer()
            let api = API(
                dependencies: harness.dependencies,
                middlewares: [TracingMiddleware(tracer: tracer), MetricsMiddleware(factory: metrics), RetryMiddleware(), LoggingMiddleware(), RedirectMiddleware()]
            )
            let export = try await api.stream(AdHocRequest<Empty, Empty>(.show, "export"))
            // The head is in, the body is not read: the call is not over.
            #expect(metrics.counters(label: MetricsMiddleware.defaultRequestsLabel).isEmpty)
            #expect(tracer.finishedSpans.isEmpty)
            _ = try await export.body.collect(upTo: 10_000)
            let counters = metrics.counters(label: MetricsMiddleware.defaultRequestsLabel)
            #expect(counters.count == 1)
            #expect(counters.first?.dimensions.contains { $0 == ("outcome", "200") } == true)
            #expect(try metrics.expectCounter("resourceful.response.bytes", [("verb", "show"), ("method", "GET"), ("path", "export"), ("outcome", "200")]).totalValue == 3000)
            #expect(tracer.finishedSpans.count == 1)
            #expect(tracer.finishedSpans.first?.attributes["http.response.body.size"]?.toSpanAttribute() == .int64(3000))
        }
    }

    @Test func aStreamDroppedUnreadIsRecordedAsCancelled() async throws {
        try await Harness.run { harness in
            Self.export(harness)
            let metrics = TestMetrics()
            let api = API(dependencies: harness.dependencies, middlewares: [MetricsMiddleware(factory: metrics), RedirectMiddleware()])
            do {
                let export = try await api.stream(AdHocRequest<Empty, Empty>(.show, "export"))
                for try await _ in export.body { break }
            }
            let counters = metrics.counters(label: MetricsMiddleware.defaultRequestsLabel)
            #expect(counters.count == 1)
            #expect(counters.first?.dimensions.contains { $0 == ("outcome", "cancelled") } == true)
        }
    }

    @Test func theLogSaysWhenAndHowTheStreamEnded() async throws {
        try await Harness.run { harness in
            Self.export(harness)
            let export = try await harness.api.stream(AdHocRequest<Empty, Empty>(.show, "export"))
            _ = try await export.body.collect(upTo: 10_000)
            let ended = harness.logs.entries.filter { $0.message.description == "Stream ended" }
            #expect(ended.count == 1)
            #expect(ended.first?.metadata["resourceful.response.bytes"]?.description == "3000")
        }
    }

    @Test func theCacheLeavesStreamsAlone() async throws {
        try await Harness.run { harness in
            Self.export(harness)
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [HTTPCacheMiddleware()])
            for _ in 0..<2 {
                let export = try await api.stream(AdHocRequest<Empty, Empty>(.show, "export"))
                #expect(try await export.body.collect(upTo: 10_000).readableBytes == 3000)
            }
            #expect(harness.server.requests.count == 2)
        }
    }
}
