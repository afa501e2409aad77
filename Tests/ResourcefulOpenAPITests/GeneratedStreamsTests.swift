import Foundation
import HTTPTypes
import OpenAPIGolden
import Resourceful
import ResourcefulTesting
import Testing

/// The golden `Streams` requests against a server on loopback: event streams and JSON Lines read
/// with `api.events` and `api.lines` into the types the document gives, binary bodies written to
/// files with `api.download`, and bodies sent from files with the media type the document names.
@Suite struct GeneratedStreamsTests {
    static func streamed(_ text: String, as contentType: String) -> MockResponse {
        var response = MockResponse(headerFields: [.contentType: contentType])
        response.parts = [Data(text.utf8)]
        return response
    }

    static func temporaryFile(_ name: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-generated-\(UUID().uuidString)-\(name)")
    }

    @Test func eventsDecodeTheDataTheItemSchemaGives() async throws {
        try await GeneratedAPIHarness.run { api, server in
            let text = "event: progress\ndata: {\"state\": \"running\", \"percent\": 40}\n\nid: 9\ndata: {\"state\": \"done\"}\n\n"
            server.stub(.get, "/v1/jobs/j1/events", Self.streamed(text, as: "text/event-stream"))
            var received: [ServerSentEvent<Streams.JobStatus>] = []
            for try await event in api.events(Streams.WatchJob(id: "j1"), reconnect: .never) {
                received.append(event)
            }
            #expect(received.map(\.data) == [Streams.JobStatus(state: .running, percent: 40), Streams.JobStatus(state: .done)])
            #expect(received.map(\.type) == ["progress", "message"])
            #expect(received.last?.id == "9")
        }
    }

    @Test func eventsOfTextAreTheirDataAsSent() async throws {
        try await GeneratedAPIHarness.run { api, server in
            server.stub(.get, "/v1/logs", Self.streamed("data: started\n\ndata: {not json}\n\n", as: "text/event-stream"))
            var lines: [String] = []
            for try await event in api.events(Streams.TailLogs(level: "info"), reconnect: .never) {
                lines.append(event.data)
            }
            #expect(lines == ["started", "{not json}"])
            #expect(server.requests.last?.query == "level=info")
        }
    }

    @Test func linesDecodeTheArraysItemsOrTheItemSchema() async throws {
        try await GeneratedAPIHarness.run { api, server in
            server.stub(.get, "/v1/orders/export", Self.streamed("{\"id\": 1, \"total\": 9.5}\n{\"id\": 2, \"total\": 3}\n", as: "application/x-ndjson"))
            server.stub(.get, "/v1/metrics", Self.streamed("{\"name\": \"cpu\", \"value\": 0.25}\n", as: "application/jsonl"))
            var orders: [Streams.Order] = []
            for try await order in api.lines(Streams.ExportOrders()) {
                orders.append(order)
            }
            #expect(orders == [Streams.Order(id: 1, total: 9.5), Streams.Order(id: 2, total: 3)])
            var samples: [Streams.StreamMetrics.Item] = []
            for try await sample in api.lines(Streams.StreamMetrics()) {
                samples.append(sample)
            }
            #expect(samples == [Streams.StreamMetrics.Item(name: "cpu", value: 0.25)])
        }
    }

    @Test func aBinaryResponseIsDownloadedAndItsErrorBodyDecoded() async throws {
        try await GeneratedAPIHarness.run { api, server in
            let bytes = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 * 7) })
            server.stub(
                .get, "/v1/files/backup.bin",
                MockResponse(headerFields: [.contentType: "application/octet-stream"], body: bytes),
                .json(raw: #"{"title": "gone"}"#, status: .notFound)
            )
            let destination = Self.temporaryFile("backup.bin")
            defer { try? FileManager.default.removeItem(at: destination) }
            let result = try await api.download(Streams.DownloadFile(name: "backup.bin"), to: destination)
            #expect(result.bytes == bytes.count)
            #expect(try Data(contentsOf: destination) == bytes)

            let error = try await #require(throws: APIError.self) {
                try await api.download(Streams.DownloadFile(name: "backup.bin"), to: destination)
            }
            #expect(error.errorResponse(as: Streams.Problem.self)?.title == "gone")
        }
    }

    @Test func aBinaryBodyIsSentFromItsFileWithTheDocumentsMediaType() async throws {
        try await GeneratedAPIHarness.run { api, server in
            let file = Self.temporaryFile("upload.bin")
            defer { try? FileManager.default.removeItem(at: file) }
            let bytes = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0 * 13) })
            try bytes.write(to: file)
            server.stub(.put, "/v1/files/upload.bin", .json(raw: #"{"name": "upload.bin", "size": 10000}"#))
            server.stub(.post, "/v1/photos", .json(raw: #"{"name": "p", "size": 10000}"#, status: .created))

            let stored = try await api.call(Streams.UploadFile(name: "upload.bin", file: file, overwrite: true))
            #expect(stored == Streams.StoredFile(name: "upload.bin", size: 10_000))
            let upload = try #require(server.requests.last)
            #expect(upload.method == .put)
            #expect(upload.query == "overwrite=true")
            #expect(upload.body == bytes)
            #expect(upload.headerFields[.contentType] == "application/octet-stream")

            _ = try await api.call(Streams.AddPhoto(file: file))
            #expect(server.requests.last?.headerFields[.contentType] == "image/png")
            _ = try await api.call(Streams.AddPhoto(file: file, contentType: "image/jpeg"))
            #expect(server.requests.last?.headerFields[.contentType] == "image/jpeg")
            #expect(server.requests.last?.body == bytes)
        }
    }
}
