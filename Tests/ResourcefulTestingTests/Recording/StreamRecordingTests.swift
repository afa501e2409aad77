import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

/// Streams through the recording and replaying transports: events recorded as masked text, and
/// read back from the file as the same sequence.
@Suite struct StreamRecordingTests {
    struct Token: Codable, Sendable, Equatable {
        var n: Int
        var accessToken: String
    }

    static func events(_ count: Int) -> String {
        (1...count).map { "id: \($0)\ndata: {\"n\":\($0),\"accessToken\":\"\(CassetteFixture.accessToken)\"}\n\n" }.joined()
    }

    @Test func eventsAreRecordedMaskedAndReplayedAsAStream() async throws {
        let file = try CassetteFixture.scratchFile()
        let live = AsyncHTTPClientTransport()
        let base = Locked<URL?>(nil)
        try await MockServer.withRunning { server in
            base.withLock { $0 = server.baseURL.appendingPathComponent("v1") }
            var response = MockResponse(headerFields: [.contentType: "text/event-stream"])
            response.parts = [Data(Self.events(2).utf8), Data(Self.events(3).utf8.dropFirst(Self.events(2).utf8.count))]
            server.stub(.get, "/v1/tokens", response)
            let recorder = try RecordingTransport(live, file: file)
            let api = CassetteFixture.api(server.baseURL.appendingPathComponent("v1"), recorder)
            var live: [ServerSentEvent<Token>] = []
            for try await event in api.events(AdHocRequest<Token, Empty>(.show, "tokens"), reconnect: .never) { live.append(event) }
            #expect(live.map(\.data.n) == [1, 2, 3])
        }
        try await live.shutdown()
        #expect(try CassetteFixture.secretsIn(file).isEmpty)
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(text.contains("text/event-stream"))
        let replaying = try ReplayingTransport(file: file)
        let api = CassetteFixture.api(try #require(base.withLock { $0 }), replaying)
        var replayed: [ServerSentEvent<Token>] = []
        for try await event in api.events(AdHocRequest<Token, Empty>(.show, "tokens"), reconnect: .never) { replayed.append(event) }
        #expect(replayed.map(\.data.n) == [1, 2, 3])
        #expect(replayed.map(\.id) == ["1", "2", "3"])
        #expect(replayed.allSatisfy { $0.data.accessToken != CassetteFixture.accessToken })
    }

    @Test func aStreamLongerThanTheLimitKeepsItsFirstWholeLines() async throws {
        let file = try CassetteFixture.scratchFile()
        let live = AsyncHTTPClientTransport()
        let base = Locked<URL?>(nil)
        let line = String(repeating: "x", count: 1000)
        try await MockServer.withRunning { server in
            base.withLock { $0 = server.baseURL.appendingPathComponent("v1") }
            var response = MockResponse(headerFields: [.contentType: "application/x-ndjson"])
            response.parts = Array(repeating: Data("{\"line\":\"\(line)\"}\n".utf8), count: 2000)
            server.stub(.get, "/v1/rows", response)
            let api = CassetteFixture.api(server.baseURL.appendingPathComponent("v1"), try RecordingTransport(live, file: file))
            var count = 0
            for try await _ in api.lines(AdHocRequest<[String: String], Empty>(.index, "rows")) { count += 1 }
            #expect(count == 2000)
        }
        try await live.shutdown()
        let replaying = try ReplayingTransport(file: file)
        let api = CassetteFixture.api(try #require(base.withLock { $0 }), replaying)
        var count = 0
        for try await row in api.lines(AdHocRequest<[String: String], Empty>(.index, "rows")) {
            #expect(row["line"] == line)
            count += 1
        }
        // As many whole lines as 1 MiB holds.
        #expect(count == RecordingTransport.streamRecordingLimit / "{\"line\":\"\(line)\"}\n".utf8.count)
    }
}
