import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

/// The README's streaming samples, compiled and run against a MockServer.
@Suite struct ReadmeStreamingSamplesTests {
    struct Receipt: Codable, Sendable { var ok: Bool }
    struct Deployment: Codable, Sendable { var state: String }
    struct Row: Codable, Sendable, Equatable { var n: Int }

    struct ShowAsset: ResourceRequest {
        typealias ResourceType = Empty
        let verb = ResourceVerb.show
        var path: ResourcePath { "assets/\(id)" }
        let id: Int
    }

    struct PutBackup: ResourceRequest {
        typealias ResourceType = Receipt
        let verb = ResourceVerb.update
        let path: ResourcePath = "backups/latest"
        let file: URL
        var parameters: FileUpload { FileUpload(file, contentType: "application/zstd") }
    }

    struct WatchDeployments: ResourceRequest {
        typealias ResourceType = Deployment
        let verb = ResourceVerb.show
        let path: ResourcePath = "deployments/watch"
    }

    struct ExportRows: ResourceRequest {
        typealias ResourceType = Row
        let verb = ResourceVerb.index
        let path: ResourcePath = "rows"
    }

    @Test func theSamplesRun() async throws {
        try await Harness.run { harness in
            let api = harness.api
            harness.server.stub(.get, "/v1/assets/42", MockResponse(headerFields: [.contentLength: "5"], body: Data("asset".utf8)))
            harness.server.stub(.put, "/v1/backups/latest", .json(raw: #"{"ok":true}"#))
            harness.server.stub(.get, "/v1/deployments/watch", MockResponse(headerFields: [.contentType: "text/event-stream"], body: Data("event: deploy\nid: 7\ndata: {\"state\":\"live\"}\n\n".utf8)))
            harness.server.stub(.get, "/v1/rows", MockResponse(headerFields: [.contentType: "application/x-ndjson"], body: Data("{\"n\":1}\n{\"n\":2}\n".utf8)))
            let destination = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-readme-\(UUID().uuidString).bin")
            defer { try? FileManager.default.removeItem(at: destination) }

            let result = try await api.download(ShowAsset(id: 42), to: destination) { progress in
                _ = (progress.bytesWritten, progress.totalBytes ?? -1)
            }
            #expect(result.bytes == 5)
            #expect(try Data(contentsOf: destination) == Data("asset".utf8))

            let receipt = try await api.call(PutBackup(file: destination))
            #expect(receipt.ok)
            #expect(harness.server.requests.last?.body == Data("asset".utf8))

            var states: [String] = []
            for try await event in api.events(WatchDeployments(), reconnect: .never) {
                #expect(event.type == "deploy")
                #expect(event.id == "7")
                states.append(event.data.state)
            }
            #expect(states == ["live"])

            var rows: [Row] = []
            for try await row in api.lines(ExportRows()) { rows.append(row) }
            #expect(rows == [Row(n: 1), Row(n: 2)])
        }
    }
}
