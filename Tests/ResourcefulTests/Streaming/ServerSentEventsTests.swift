import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

/// `API.events` against scripted faults: broken connections, a server that says stop, bodies
/// that are not event streams, cancellation while waiting to reconnect.
@Suite struct ServerSentEventsTests {
    struct Tick: Codable, Sendable, Equatable { var n: Int }

    static func stream(_ text: String, fault: MockResponse.Fault? = nil) -> MockResponse {
        var response = MockResponse(headerFields: [.contentType: "text/event-stream"], fault: fault)
        response.parts = [Data(text.utf8)]
        return response
    }

    @Test func aBrokenConnectionIsOpenedAgainFromTheLastID() async throws {
        try await Harness.run { harness in
            let first = "retry: 10\nid: 1\ndata: {\"n\":1}\n\nid: 2\ndata: {\"n\":2}\n\ndata: {\"n\":"
            harness.server.stub(
                .get, "/v1/ticks",
                Self.stream(first, fault: .closeMidBody(bytes: first.utf8.count)),
                Self.stream("id: 3\ndata: {\"n\":3}\n\n"),
                .status(.noContent)
            )
            var received: [ServerSentEvent<Tick>] = []
            for try await event in harness.api.events(AdHocRequest<Tick, Empty>(.show, "ticks")) {
                received.append(event)
            }
            #expect(received.map(\.data.n) == [1, 2, 3])
            let sent = harness.server.requests.map { $0.headerFields[HTTPField.Name("Last-Event-ID")!] }
            #expect(sent == [nil, "2", "3"])
            #expect(harness.server.requests.allSatisfy { $0.headerFields[.accept] == "text/event-stream" })
        }
    }

    @Test func aBodyThatIsNotAnEventStreamFails() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/ticks", .json(raw: #"{"n":1}"#))
            let error = await #expect(throws: APIError.self) {
                for try await _ in harness.api.events(AdHocRequest<Tick, Empty>(.show, "ticks")) {}
            }
            #expect(error?.kind == .decodingFailed)
            #expect(harness.server.requests.count == 1)
        }
    }

    @Test func anEventWhoseDataIsNotTheTypeFailsWithoutShowingIt() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/ticks", Self.stream("event: tick\ndata: {\"secret\":\"s3cr3t-value\"}\n\n"))
            let error = await #expect(throws: APIError.self) {
                for try await _ in harness.api.events(AdHocRequest<Tick, Empty>(.show, "ticks"), reconnect: .never) {}
            }
            #expect(error?.kind == .decodingFailed)
            #expect(error?.codingPath == "n")
            let shown = error.map { "\($0)" }?.contains("s3cr3t") == false
            #expect(shown)
        }
    }

    @Test func aStatusOutside2xxIsThrownNotRetriedForever() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/ticks", .json(raw: #"{"error":"gone"}"#, status: .gone))
            let error = await #expect(throws: APIError.self) {
                for try await _ in harness.api.events(AdHocRequest<Tick, Empty>(.show, "ticks")) {}
            }
            #expect(error?.status == .gone)
            #expect(harness.server.requests.count == 1)
        }
    }

    @Test func aServerThatKeepsClosingEmptyEndsAfterTheAttempts() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/ticks", Self.stream("retry: 1\n: nothing yet\n\n"))
            var count = 0
            for try await _ in harness.api.events(AdHocRequest<Tick, Empty>(.show, "ticks"), reconnect: EventStreamReconnection(maxAttempts: 3, delay: .milliseconds(1))) {
                count += 1
            }
            #expect(count == 0)
            #expect(harness.server.requests.count == 4)
        }
    }

    @Test func cancellingWhileWaitingToReconnectEndsAtOnce() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/ticks", Self.stream("data: {\"n\":1}\n\n"))
            let api = harness.api
            let got = AsyncStream<Void>.makeStream()
            let reading = Task {
                for try await _ in api.events(AdHocRequest<Tick, Empty>(.show, "ticks"), reconnect: EventStreamReconnection(delay: .seconds(3600))) {
                    got.continuation.yield()
                }
            }
            var events = got.stream.makeAsyncIterator()
            _ = await events.next()
            // Poll until the stream has ended and the sequence waits to reconnect: one request,
            // and cancellation must end the hour's wait.
            reading.cancel()
            let result = await reading.result
            guard case .failure(let error) = result else {
                Issue.record("the sequence ended without error")
                return
            }
            #expect((error as? APIError)?.kind == .cancelled)
            #expect(harness.server.requests.count == 1)
        }
    }

    @Test func oneEventPerConnectionWithRetryZeroIsThrottled() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/ticks", Self.stream("retry: 0\ndata: {\"n\":1}\n\n"))
            let delay = Duration.milliseconds(300)
            let window = Duration.milliseconds(1500)
            let start = ContinuousClock.now
            let reconnect = EventStreamReconnection(maxAttempts: 5, delay: delay, maxDelay: .seconds(1))
            for try await _ in harness.api.events(AdHocRequest<Tick, Empty>(.show, "ticks"), reconnect: reconnect) {
                if ContinuousClock.now - start >= window { break }
            }
            // One reconnection at once, then at most one per delay over the time that passed
            // (a loaded machine delivers the last event late); without a floor, one per round
            // trip (hundreds).
            let elapsed = ContinuousClock.now - start
            let connections = harness.server.requests.count
            #expect(connections <= Int(elapsed / delay) + 3, "\(connections) connections in \(elapsed)")
        }
    }
}
