import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

/// Events, lines and uploads against servers the project did not write: sse-starlette and
/// FastAPI's `StreamingResponse` under uvicorn (`Tests/Support/PythonServers/streaming_app.py`).
@Suite(.streamingApp, .serialized) struct StreamingServerTests {
    struct Tick: Codable, Sendable, Equatable {
        var n: Int
        var text: String
    }

    struct Upload: Codable, Sendable {
        var bytes: Int
        var sha256: String
        var content_length: Int?
        var chunked: Bool
    }

    static func api(timeout: Duration = .seconds(30)) throws -> API {
        let server = try #require(PythonServer.streamingApp)
        let config = APIConfig(baseURL: server.baseURL, service: "streaming", timeout: timeout)
        return API(dependencies: APIDependencies(apiConfig: config, authenticationStorage: InMemoryAuthenticationStorage([:]), transport: AsyncHTTPClientTransport()))
    }

    static func seenLastEventIDs(_ api: API) async throws -> [String?] {
        try await api.call(AdHocRequest<[String?], Empty>(.show, "events/seen"))
    }

    @Test func eventsResumeFromTheLastEventIDAfterTheServerCloses() async throws {
        let api = try Self.api()
        _ = try await api.call(AdHocRequest<[String: Bool], Empty>(.create, "events/reset"))
        let request = AdHocRequest<Tick, [String: String]>(.show, "events", parameters: ["count": "5", "per_connection": "2", "retry": "50"])
        var received: [ServerSentEvent<Tick>] = []
        let start = ContinuousClock.now
        let clientDelay = Duration.seconds(300)
        for try await event in api.events(request, reconnect: EventStreamReconnection(maxAttempts: 1, delay: clientDelay)) {
            received.append(event)
        }
        // Three reconnections at the server's `retry: 50`, never the client's own delay: a minute
        // leaves a loaded machine room, a fifth of one such delay.
        #expect(ContinuousClock.now - start < .seconds(60))
        #expect(received.map(\.data) == (1...5).map { Tick(n: $0, text: "tick \($0)") })
        #expect(received.map(\.id) == ["1", "2", "3", "4", "5"])
        #expect(received.allSatisfy { $0.type == "tick" })
        // Three connections brought events, a fourth (from id 5) brought none and ended the
        // sequence: each reconnection sent the last id, after the server's 50 ms, not 30 s.
        #expect(try await Self.seenLastEventIDs(api) == [nil, "2", "4", "5"])
        try await api.shutdown()
    }

    @Test func aMultiLineEventKeepsItsLinesTypeAndID() async throws {
        let api = try Self.api()
        var received: [ServerSentEvent<String>] = []
        for try await event in api.events(AdHocRequest<String, Empty>(.show, "events/multiline"), reconnect: .never) {
            received.append(event)
        }
        #expect(received.count == 1)
        #expect(received.first?.data == "a\nb\nc")
        #expect(received.first?.type == "multi")
        #expect(received.first?.id == "m1")
        try await api.shutdown()
    }

    @Test(arguments: ["ndjson", "jsonl"]) func jsonLinesArriveAsTypedValues(type: String) async throws {
        let api = try Self.api()
        var lines: [Tick] = []
        for try await line in api.lines(AdHocRequest<Tick, [String: String]>(.index, "lines", parameters: ["count": "1000", "type": type])) {
            lines.append(line)
        }
        #expect(lines == (0..<1000).map { Tick(n: $0, text: "line \($0)") } || lines == (1...1000).map { Tick(n: $0, text: "line \($0)") })
        try await api.shutdown()
    }

    @Test func linesAfterALongOneFromUvicornStayInBoundedMemory() async throws {
        let api = try Self.api()
        let before = try StreamMemoryTests.peakVirtualBytes()
        var count = 0
        for try await value in api.lines(AdHocRequest<Int, [String: String]>(.index, "lines/long-then-short", parameters: ["long": String(8 << 20), "chunks": "16", "per_chunk": "16384"])) {
            count += value == 1 ? 1 : 0
        }
        let after = try StreamMemoryTests.peakVirtualBytes()
        #expect(count == 16 * 16384)
        // Before, each short line reserved the long one's 8 MiB: 128 GiB per chunk.
        #expect(after - before < 2 << 30, "the peak virtual size grew by \((after - before) >> 20) MiB")
        try await api.shutdown()
    }

    @Test func eventsAfterALongOneFromUvicornStayInBoundedMemory() async throws {
        let api = try Self.api()
        let before = try StreamMemoryTests.peakVirtualBytes()
        var count = 0
        var longest = 0
        let request = AdHocRequest<String, [String: String]>(.show, "events/long-then-short", parameters: ["long": String(8 << 20), "chunks": "16", "per_chunk": "4096"])
        for try await event in api.events(request, reconnect: .never) {
            count += 1
            longest = max(longest, event.data.utf8.count)
        }
        let after = try StreamMemoryTests.peakVirtualBytes()
        #expect(count == 1 + 16 * 4096)
        #expect(longest == 8 << 20)
        #expect(after - before < 2 << 30, "the peak virtual size grew by \((after - before) >> 20) MiB")
        try await api.shutdown()
    }

    @Test func aJSONTextSequenceArrivesAsTypedValues() async throws {
        let api = try Self.api()
        var values: [Tick] = []
        for try await value in api.lines(AdHocRequest<Tick, [String: String]>(.index, "json-seq", parameters: ["count": "50"])) {
            values.append(value)
        }
        #expect(values.count == 50)
        #expect(values.map(\.n) == values.map(\.n).sorted())
        try await api.shutdown()
    }

    @Test func aLineThatIsNotJSONIsNamedByNumberNeverByText() async throws {
        let api = try Self.api()
        var count = 0
        let error = await #expect(throws: APIError.self) {
            for try await _ in api.lines(AdHocRequest<Tick, [String: String]>(.index, "lines/bad", parameters: ["at": "3", "count": "5"])) {
                count += 1
            }
        }
        #expect(count == 2)
        #expect(error?.kind == .decodingFailed)
        #expect(error?.detail?.contains("line 3") == true)
        #expect(error.map { "\($0)" }?.contains("not json") == false)
        try await api.shutdown()
    }

    @Test func aServerSilentBetweenLinesTimesOut() async throws {
        let api = try Self.api(timeout: .milliseconds(500))
        var count = 0
        let error = await #expect(throws: APIError.self) {
            for try await _ in api.lines(AdHocRequest<Tick, [String: String]>(.index, "lines/slow", parameters: ["count": "3", "interval_ms": "20000"])) {
                count += 1
            }
        }
        #expect(count == 1)
        #expect(error?.kind == .timeout)
        try await api.shutdown()
    }

    @Test func aFileUploadArrivesWholeWithItsLength() async throws {
        let api = try Self.api()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-upload-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let made = try await Command.run("/bin/sh", ["-c", "head -c 40000000 /dev/urandom > '\(file.path)' && sha256sum '\(file.path)'"])
        let expected = try #require(made.output.split(separator: " ").first.map(String.init))
        let receipt = try await api.call(AdHocRequest<Upload, FileUpload>(.update, "upload", parameters: FileUpload(file)))
        #expect(receipt.bytes == 40_000_000)
        #expect(receipt.content_length == 40_000_000)
        #expect(!receipt.chunked)
        #expect(receipt.sha256 == expected)
        try await api.shutdown()
    }

    @Test func aMultipartFilePartArrivesWhole() async throws {
        struct Part: Codable, Sendable {
            var name: String
            var filename: String?
            var bytes: Int
            var sha256: String
            var value: String?
        }
        struct Form: Encodable, Sendable {
            var title: String
            var file: MultipartFile
        }
        let api = try Self.api()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-part-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let made = try await Command.run("/bin/sh", ["-c", "head -c 5000000 /dev/urandom > '\(file.path)' && sha256sum '\(file.path)'"])
        let expected = try #require(made.output.split(separator: " ").first.map(String.init))
        var request = AdHocRequest<[Part], Form>(.create, "upload/multipart", parameters: Form(title: "report", file: MultipartFile(contentsOf: file, filename: "r.bin")))
        request.bodyEncoding = .multipart
        let parts = try await api.call(request)
        #expect(parts.map(\.name) == ["title", "file"])
        #expect(parts.first?.value == "report")
        #expect(parts.last?.filename == "r.bin")
        #expect(parts.last?.bytes == 5_000_000)
        #expect(parts.last?.sha256 == expected)
        try await api.shutdown()
    }
}
