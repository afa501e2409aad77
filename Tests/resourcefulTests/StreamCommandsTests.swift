import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

/// `--output` and `--stream` on the verb commands.
@Suite struct StreamCommandsTests {
    @Test func outputWritesTheBodyToAFileAndNothingElse() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-cli-output-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try await MockServer.withRunning { server in
            var response = MockResponse(headerFields: [.contentLength: String(body.count), .eTag: "\"a\""])
            response.parts = [body.prefix(100_000), body.dropFirst(100_000)].map { Data($0) }
            server.stub(.get, "/v1/files/asset.bin", response)
            let file = folder.appendingPathComponent("asset.bin")
            let result = try await CLITool.run(server, ["show", "files/asset.bin", "--output", file.path])
            #expect(result.status == 0)
            // Standard error is not a terminal here: no progress bar, and nothing on standard output.
            #expect(result.output.isEmpty)
            #expect(try Data(contentsOf: file) == body)
        }
    }

    @Test func outputOfAnErrorLeavesNoFile() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-cli-output-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/files/gone", .json(raw: #"{"error":"gone"}"#, status: .notFound))
            let result = try await CLITool.run(server, ["show", "files/gone", "--output", folder.appendingPathComponent("gone").path])
            #expect(result.status == 1)
            #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty == true)
        }
    }

    @Test func streamPrintsEachEventsData() async throws {
        try await MockServer.withRunning { server in
            var response = MockResponse(headerFields: [.contentType: "text/event-stream"])
            response.parts = [Data("id: 1\ndata: {\"n\":1}\n\n: ping\n\n".utf8), Data("event: tick\r\ndata: two\r\ndata: lines\r\n\r\n".utf8)]
            server.stub(.get, "/v1/feed", response)
            let result = try await CLITool.run(server, ["show", "feed", "--stream"])
            #expect(result.status == 0)
            #expect(result.output == "{\"n\":1}\ntwo\nlines\n")
        }
    }

    @Test func streamPrintsEachLine() async throws {
        try await MockServer.withRunning { server in
            var response = MockResponse(headerFields: [.contentType: "application/x-ndjson"])
            response.parts = [Data("{\"n\":1}\n{\"n\"".utf8), Data(":2}\r\n{\"n\":3}".utf8)]
            server.stub(.get, "/v1/rows", response)
            let result = try await CLITool.run(server, ["index", "rows", "--stream"])
            #expect(result.status == 0)
            #expect(result.output == "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n")
        }
    }
}
