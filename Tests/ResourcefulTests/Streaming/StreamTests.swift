import Foundation
import HTTPTypes
import NIOCore
import Resourceful
import ResourcefulTesting
import Testing

/// A response body read as it arrives (`API.stream`), over the live transport and a real socket.
@Suite struct StreamTests {
    static func parts(_ count: Int, of size: Int) -> [Data] {
        Array(repeating: Data(repeating: UInt8(ascii: "x"), count: size), count: count)
    }

    @Test func theFirstPartArrivesBeforeTheServerHasSentTheRest() async throws {
        try await Harness.run { harness in
            var response = MockResponse()
            response.parts = Self.parts(20, of: 1024)
            response.partDelay = .milliseconds(50)
            harness.server.stub(.get, "/v1/export", response)
            let export = try await harness.api.stream(AdHocRequest<Empty, Empty>(.show, "export"))
            var iterator = export.body.makeAsyncIterator()
            let first = try #require(try await iterator.next())
            #expect(first.readableBytes > 0)
            #expect(harness.server.bodyBytesSent < 20 * 1024)
            var total = first.readableBytes
            while let chunk = try await iterator.next() { total += chunk.readableBytes }
            #expect(total == 20 * 1024)
        }
    }

    @Test func aReaderThatStopsReadingHoldsTheServerBack() async throws {
        try await Harness.run { harness in
            // 1 GiB, far more than the kernel's socket buffers may grow to (here up to 32 MiB
            // to receive and 4 MiB to send, net.ipv4.tcp_rmem and tcp_wmem).
            var response = MockResponse(headerFields: [.contentLength: String(16384 * 64 * 1024)])
            response.parts = Self.parts(16384, of: 64 * 1024)
            harness.server.stub(.get, "/v1/export", response)
            let export = try await harness.api.stream(AdHocRequest<Empty, Empty>(.show, "export"))
            var iterator = export.body.makeAsyncIterator()
            _ = try await iterator.next()
            // The server writes until the socket buffers and the client's bounded queue are full,
            // then waits: poll until what it sent stops growing.
            var sent = -1
            let giveUp = ContinuousClock.now + .seconds(20)
            while harness.server.bodyBytesSent != sent, ContinuousClock.now < giveUp {
                sent = harness.server.bodyBytesSent
                try await Task.sleep(for: .milliseconds(300))
            }
            // Quiet, it stops near the socket buffers' size (4 to 18 MiB here); without
            // back-pressure the whole body would be sent within seconds.
            #expect(sent < 512 * 1024 * 1024)
        }
    }

    @Test func aBodyLeftUnreadClosesItsConnection() async throws {
        try await Harness.run { harness in
            var response = MockResponse(headerFields: [.contentLength: String(256 * 64 * 1024)])
            response.parts = Self.parts(256, of: 64 * 1024)
            harness.server.stub(.get, "/v1/export", response)
            harness.server.stub(.get, "/v1/small", .json(raw: "[]"))
            do {
                let export = try await harness.api.stream(AdHocRequest<Empty, Empty>(.show, "export"))
                for try await _ in export.body { break }
            }
            // The next call cannot have the half-read connection: it opens another.
            let before = harness.server.connectionCount
            _ = try await harness.api.call(AdHocRequest<[Int], Empty>(.index, "small"))
            #expect(harness.server.connectionCount == before + 1)
        }
    }

    @Test func aBodyNeverReadFreesItsConnection() async throws {
        try await Harness.run(configure: { $0.http.maximumConnectionsPerHost = 1; $0.timeout = .seconds(20) }) { harness in
            var response = MockResponse(headerFields: [.contentLength: String(256 * 64 * 1024)])
            response.parts = Self.parts(256, of: 64 * 1024)
            harness.server.stub(.get, "/v1/export", response)
            harness.server.stub(.get, "/v1/small", .json(raw: "[]"))
            do {
                let export = try await harness.api.stream(AdHocRequest<Empty, Empty>(.show, "export"))
                #expect(export.status == .ok)
            }
            // The one connection the pool may open is not held by the body nobody read.
            let list = try await harness.api.call(AdHocRequest<[Int], Empty>(.index, "small"))
            #expect(list.isEmpty)
        }
    }

    @Test func cancellingTheReaderEndsTheStreamAtOnce() async throws {
        try await Harness.run { harness in
            var response = MockResponse()
            response.parts = Self.parts(100, of: 16)
            response.partDelay = .seconds(2)
            harness.server.stub(.get, "/v1/feed", response)
            let api = harness.api
            let reading = Task {
                let feed = try await api.stream(AdHocRequest<Empty, Empty>(.show, "feed"))
                for try await _ in feed.body {}
            }
            // Poll until the request has reached the server, then cancel the reader.
            let arrived = ContinuousClock.now + .seconds(30)
            while harness.server.requests.isEmpty, ContinuousClock.now < arrived {
                try await Task.sleep(for: .milliseconds(5))
            }
            let start = ContinuousClock.now
            reading.cancel()
            let result = await reading.result
            #expect(ContinuousClock.now - start < .seconds(60))
            guard case .failure(let error) = result else {
                Issue.record("the stream ended without error")
                return
            }
            #expect((error as? APIError)?.kind == .cancelled)
        }
    }

    @Test func aServerSilentBetweenPartsTimesOut() async throws {
        let deadline = Duration.milliseconds(400)
        try await Harness.run(configure: { $0.timeout = deadline }) { harness in
            var response = MockResponse()
            response.parts = [Data("first".utf8), Data("late".utf8)]
            response.partDelay = .seconds(600)
            harness.server.stub(.get, "/v1/feed", response)
            let start = ContinuousClock.now
            let error = await #expect(throws: APIError.self) {
                let feed = try await harness.api.stream(AdHocRequest<Empty, Empty>(.show, "feed"))
                for try await _ in feed.body {}
            }
            #expect(error?.kind == .timeout)
            #expect(error?.path == "feed")
            // A few times the deadline and a minute for a loaded machine, a tenth of the silence.
            #expect(ContinuousClock.now - start < deadline * 10 + .seconds(60))
        }
    }

    @Test func aStreamTimeoutBoundsTheWholeStream() async throws {
        struct Feed: ResourceRequest {
            typealias ResourceType = Empty
            let verb = ResourceVerb.show
            let path: ResourcePath = "feed"
            static let streamTimeout = Duration.milliseconds(800)
            func configure(_ options: inout RequestOptions) { options.streamTimeout = Self.streamTimeout }
        }
        try await Harness.run { harness in
            var response = MockResponse()
            // One byte every 100 ms for ten minutes: never silent for long, never done in time.
            response.parts = Self.parts(6000, of: 1)
            response.partDelay = .milliseconds(100)
            harness.server.stub(.get, "/v1/feed", response)
            let start = ContinuousClock.now
            let error = await #expect(throws: APIError.self) {
                let feed = try await harness.api.stream(Feed())
                for try await _ in feed.body {}
            }
            #expect(error?.kind == .timeout)
            // A few times the stream's limit and a minute for a loaded machine, a tenth of the stream.
            #expect(ContinuousClock.now - start < Feed.streamTimeout * 10 + .seconds(60))
        }
    }

    @Test func aBodyShorterThanItsContentLengthFails() async throws {
        try await Harness.run { harness in
            var response = MockResponse(headerFields: [.contentLength: "4096"], fault: .closeMidBody(bytes: 1000))
            response.parts = Self.parts(4, of: 1024)
            harness.server.stub(.get, "/v1/export", response)
            let error = await #expect(throws: APIError.self) {
                let export = try await harness.api.stream(AdHocRequest<Empty, Empty>(.show, "export"))
                for try await _ in export.body {}
            }
            #expect(error?.kind == .transport)
        }
    }

    @Test func anErrorStatusThrowsWithItsBodyDecoded() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/export", .json(raw: #"{"title":"nope"}"#, status: .forbidden))
            let error = await #expect(throws: APIError.self) {
                _ = try await harness.api.stream(AdHocRequest<Empty, Empty>(.show, "export"))
            }
            #expect(error?.status == .forbidden)
        }
    }

    @Test func theLogNamesTheStreamsSizeNeverItsBytes() async throws {
        try await Harness.run { harness in
            var response = MockResponse(headerFields: [.contentLength: "26"])
            response.parts = [Data("secret-body-".utf8), Data("abcdefghijklmn".utf8)]
            harness.server.stub(.get, "/v1/export", response)
            let export = try await harness.api.stream(AdHocRequest<Empty, Empty>(.show, "export"))
            let body = try await export.body.collect(upTo: 1024)
            #expect(body.readableBytes == 26)
            #expect(!harness.logText.contains("secret-body"))
            #expect(harness.logText.contains("26 bytes"))
        }
    }
}
