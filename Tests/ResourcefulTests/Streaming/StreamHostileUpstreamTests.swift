import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

/// Streams, event streams and downloads against a hostile upstream: a `Retry-After` of a year,
/// events longer than the cap, connections that end at once with a few events, 206s that do not
/// name their version, event ids of megabytes; and a middleware's stream time-out.
@Suite struct StreamHostileUpstreamTests {
    struct Tick: Codable, Sendable, Equatable { var n: Int }

    /// A request whose head must come within `timeout`.
    struct Timed<Value: Decodable & Sendable>: ResourceRequest {
        typealias ResourceType = Value
        let verb = ResourceVerb.show
        let path: ResourcePath
        let timeout: Duration
        func configure(_ options: inout RequestOptions) { options.timeout = timeout }
    }

    static func stream(_ text: String) -> MockResponse {
        var response = MockResponse(headerFields: [.contentType: "text/event-stream"])
        response.parts = [Data(text.utf8)]
        return response
    }

    // MARK: Retry-After of a year

    @Test(.timeLimit(.minutes(3))) func aRetryAfterOfAYearReturnsTheStatusAtOnceForEveryKindOfStream() async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.run { harness in
            harness.server.route(.get, "/v1/busy") { _ in
                var busy = MockResponse.json(raw: #"{"error":"busy"}"#, status: .serviceUnavailable)
                busy.headerFields[.retryAfter] = "31536000"
                return busy
            }
            // Long enough for a loaded machine, and nothing beside a year.
            let timeout = Duration.seconds(30)
            // Each returns the 503 within the head's time-out: the year is not waited for. Each
            // kind through an API of its own: an API keeps the pause the 503 asked for.
            var api = harness.api
            var start = ContinuousClock.now
            let streamed = await #expect(throws: APIError.self) { _ = try await api.stream(Timed<Empty>(path: "busy", timeout: timeout)) }
            #expect(streamed?.status == .serviceUnavailable)
            #expect(ContinuousClock.now - start < timeout)
            // The same API sends nothing more while the pause (cut to limits.maxPause) lasts.
            start = .now
            let paused = await #expect(throws: APIError.self) { _ = try await api.stream(Timed<Empty>(path: "busy", timeout: timeout)) }
            #expect(paused?.kind == .rateLimited)
            #expect(ContinuousClock.now - start < timeout)
            #expect(harness.server.requests.count == 1)

            api = harness.api
            start = .now
            let events = await #expect(throws: APIError.self) {
                for try await _ in api.events(Timed<Tick>(path: "busy", timeout: timeout)) {}
            }
            #expect(events?.status == .serviceUnavailable)
            #expect(ContinuousClock.now - start < timeout)

            api = harness.api
            start = .now
            let lines = await #expect(throws: APIError.self) {
                for try await _ in api.lines(Timed<Tick>(path: "busy", timeout: timeout)) {}
            }
            #expect(lines?.status == .serviceUnavailable)
            #expect(ContinuousClock.now - start < timeout)

            api = harness.api
            start = .now
            let download = await #expect(throws: APIError.self) {
                _ = try await api.download(Timed<Empty>(path: "busy", timeout: timeout), to: folder.appendingPathComponent("busy.bin"))
            }
            #expect(download?.status == .serviceUnavailable)
            #expect(ContinuousClock.now - start < timeout)
            #expect(harness.server.requests.count == 4)
        }
    }

    @Test func aRetryAfterWithinTheHeadsTimeOutIsStillWaitedFor() async throws {
        try await Harness.run { harness in
            var busy = MockResponse.json(raw: #"{"error":"busy"}"#, status: .serviceUnavailable)
            busy.headerFields[.retryAfter] = "1"
            harness.server.stub(.get, "/v1/ticks", busy, Self.stream("data: {\"n\":1}\n\n"))
            let response = try await harness.api.stream(Timed<Tick>(path: "ticks", timeout: .seconds(20)))
            #expect(response.status == .ok)
            #expect(harness.server.requests.count == 2)
        }
    }

    // MARK: Reconnection throttle

    @Test func twoEventsPerConnectionWithRetryZeroAreThrottledToo() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/ticks", Self.stream("retry: 0\ndata: {\"n\":1}\n\ndata: {\"n\":2}\n\n"))
            let delay = Duration.milliseconds(300)
            let window = Duration.milliseconds(1500)
            let start = ContinuousClock.now
            let reconnect = EventStreamReconnection(maxAttempts: 5, delay: delay, maxDelay: .seconds(1))
            for try await _ in harness.api.events(AdHocRequest<Tick, Empty>(.show, "ticks"), reconnect: reconnect) {
                if ContinuousClock.now - start >= window { break }
            }
            // A few at the server's `retry: 0`, then at most one per delay over the time that
            // passed, growing: without a floor measured in time, one per round trip (hundreds).
            let elapsed = ContinuousClock.now - start
            let connections = harness.server.requests.count
            #expect(connections <= Int(elapsed / delay) + 4, "\(connections) connections in \(elapsed)")
        }
    }

    // MARK: Errors that are not a dropped connection

    @Test func anEventLongerThanTheCapIsThrownNotTakenForADroppedConnection() async throws {
        try await Harness.run(configure: { $0.maxResponseBytes = 1024 }) { harness in
            let long = "data: {\"n\":1}\n\ndata: \"" + String(repeating: "x", count: 4096) + "\"\n\n"
            harness.server.stub(.get, "/v1/ticks", Self.stream(long))
            var received: [Int] = []
            // The default reconnection settings.
            let error = await #expect(throws: APIError.self) {
                for try await event in harness.api.events(AdHocRequest<Tick, Empty>(.show, "ticks")) {
                    received.append(event.data.n)
                }
            }
            #expect(error?.kind == .responseTooLarge)
            #expect(received == [1])
            #expect(harness.server.requests.count == 1)
        }
    }

    // MARK: A middleware's stream time-out

    @Test(.timeLimit(.minutes(3))) func aMiddlewaresStreamTimeOutBoundsTheEvents() async throws {
        try await Harness.run { harness in
            // An event, then a comment every 100 ms for two minutes: never silent, never ending.
            var endless = MockResponse(headerFields: [.contentType: "text/event-stream"])
            endless.parts = [Data("data: {\"n\":1}\n\n".utf8)] + Array(repeating: Data(": still here\n".utf8), count: 1200)
            endless.partDelay = .milliseconds(100)
            harness.server.stub(.get, "/v1/ticks", endless)
            let streamTimeout = Duration.seconds(5)
            let api = API(dependencies: harness.dependencies, middlewares: [ChangeOptions { $0.streamTimeout = streamTimeout }, RedirectMiddleware()])
            let start = ContinuousClock.now
            var received = 0
            let error = await #expect(throws: APIError.self) {
                for try await _ in api.events(AdHocRequest<Tick, Empty>(.show, "ticks")) { received += 1 }
            }
            #expect(error?.kind == .timeout)
            // The first event, unless a loaded machine let the five seconds pass before it came.
            #expect(received <= 1)
            // The middleware's five seconds, and plenty for a loaded machine or the thread
            // sanitizer: well before the stream's two minutes end it.
            #expect(ContinuousClock.now - start < .seconds(100))
        }
    }

    // MARK: Event ids

    @Test func anEventIDLongerThanAKibibyteIsIgnored() async throws {
        try await Harness.run { harness in
            let huge = String(repeating: "i", count: 64 << 10)
            harness.server.stub(
                .get, "/v1/ticks",
                Self.stream("retry: 1\nid: good\ndata: {\"n\":1}\n\nid: \(huge)\ndata: {\"n\":2}\n\n"),
                .status(.noContent)
            )
            var ids: [String] = []
            for try await event in harness.api.events(AdHocRequest<Tick, Empty>(.show, "ticks"), reconnect: EventStreamReconnection(delay: .milliseconds(10))) {
                ids.append(event.id)
            }
            #expect(ids == ["good", "good"])
            let sent = harness.server.requests.map { $0.headerFields[HTTPField.Name("Last-Event-ID")!] }
            #expect(sent == [nil, "good"])
        }
    }

    // MARK: A 206 that does not name its version

    /// A 200 cut half-way with `first`'s fields, then a 206 with `resumed`'s.
    static func serveCut(_ server: MockServer, first: HTTPFields, resumed: HTTPFields) {
        server.route(.get, "/v1/asset") { request in
            guard let range = request.headerFields[.range], let start = Int(range.dropFirst(6).dropLast()) else {
                var fields = first
                fields[.contentLength] = "2000"
                var cut = MockResponse(headerFields: fields, fault: .closeMidBody(bytes: 1000))
                cut.parts = [Data(repeating: 1, count: 2000)]
                return cut
            }
            var fields = resumed
            fields[.contentRange] = "bytes \(start)-1999/2000"
            return MockResponse(status: .partialContent, headerFields: fields, body: Data(repeating: 2, count: 2000 - start))
        }
    }

    @Test func a206WithoutTheETagItWasAskedForIsRefused() async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.run { harness in
            Self.serveCut(harness.server, first: [.eTag: "\"v1\""], resumed: [:])
            let error = await #expect(throws: APIError.self) {
                _ = try await harness.api.download(AdHocRequest<Empty, Empty>(.show, "asset"), to: folder.appendingPathComponent("asset.bin"))
            }
            #expect(error?.kind == .transport)
            #expect(error?.detail?.contains("another version") == true)
            #expect(harness.server.requests.last?.headerFields[.ifRange] == "\"v1\"")
            #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty == true)
        }
    }

    @Test func a206WithAnETagButNoLastModifiedWhenResumedOnADateIsRefused() async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.run { harness in
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            let modified = HTTPDateText.format(now - 86400)
            Self.serveCut(
                harness.server,
                first: [.lastModified: modified, .date: HTTPDateText.format(now)],
                resumed: [.eTag: "\"v2\""]
            )
            let error = await #expect(throws: APIError.self) {
                _ = try await harness.api.download(AdHocRequest<Empty, Empty>(.show, "asset"), to: folder.appendingPathComponent("asset.bin"))
            }
            #expect(error?.kind == .transport)
            #expect(error?.detail?.contains("another version") == true)
            #expect(harness.server.requests.last?.headerFields[.ifRange] == modified)
            #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty == true)
        }
    }
}

extension StreamHostileUpstreamTests {
    @Test func aLineLongerThanTheCapIsThrownAfterTheLinesBeforeIt() async throws {
        try await Harness.run(configure: { $0.maxResponseBytes = 1024 }) { harness in
            let body = "{\"n\":1}\n{\"n\":2}\n\"" + String(repeating: "x", count: 4096) + "\"\n{\"n\":3}\n"
            harness.server.stub(.get, "/v1/ticks", MockResponse(headerFields: [.contentType: "application/x-ndjson"], body: Data(body.utf8)))
            var received: [Int] = []
            let error = await #expect(throws: APIError.self) {
                for try await tick in harness.api.lines(AdHocRequest<Tick, Empty>(.show, "ticks")) { received.append(tick.n) }
            }
            #expect(error?.kind == .responseTooLarge)
            #expect(received == [1, 2])
        }
    }
}
