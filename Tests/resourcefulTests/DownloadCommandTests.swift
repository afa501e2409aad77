import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `--output` with `-C -` (an interrupted download resumed by the next run) and `--max-filesize`;
/// `--stream` printing everything complete before an oversized event or line; `generate` writing
/// all its files or none.
@Suite struct DownloadCommandTests {
    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-cli-download-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    static let body = Data((0..<(512 * 1024)).map { UInt8(truncatingIfNeeded: ($0 &* 31) ^ ($0 >> 9)) })

    /// Serves `body` with `ETag "v1"`: a KiB every 20 ms without a `Range` (ten seconds, far
    /// longer than a test waits), at once as a `206` to a `Range` whose `If-Range` matches.
    static func serve(_ server: MockServer) {
        server.route(.get, "/v1/files/big.bin") { request in
            var fields: HTTPFields = [.contentType: "application/octet-stream", .eTag: "\"v1\""]
            if let range = request.headerFields[.range], request.headerFields[.ifRange] == "\"v1\"", let first = Int(range.dropFirst(6).dropLast()) {
                fields[.contentRange] = "bytes \(first)-\(body.count - 1)/\(body.count)"
                fields[.contentLength] = String(body.count - first)
                var response = MockResponse(status: .partialContent, headerFields: fields)
                response.body = Data(body[first...])
                return response
            }
            fields[.contentLength] = String(body.count)
            var response = MockResponse(headerFields: fields)
            response.parts = stride(from: 0, to: body.count, by: 1024).map { Data(body[$0..<min($0 + 1024, body.count)]) }
            response.partDelay = .milliseconds(20)
            return response
        }
    }

    @Test(arguments: [SIGINT, SIGKILL])
    func continueAtDashKeepsAnInterruptedDownloadAndTheNextRunResumesIt(signal: Int32) async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("big.bin")
        let partial = DownloadOptions.partialFile(for: file).path
        try await MockServer.withRunning { server in
            Self.serve(server)
            let configuration = try CLITool.configDirectory(for: server)
            let arguments = ["show", "files/big.bin", "-o", file.path, "-C", "-", "--env", "test", "--config-directory", configuration]
            let command = try RunningCommand(resourcefulTool, arguments)
            // Poll until part of the body is on disk, with the state beside it.
            let giveUp = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < giveUp {
                let size = (try? FileManager.default.attributesOfItem(atPath: partial)[.size] as? Int) ?? 0
                if size > 0, FileManager.default.fileExists(atPath: DownloadOptions.partialStateFile(for: file).path) { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            command.send(signal: signal)
            let stopped = try await command.finish()
            #expect(stopped.status != 0)
            if signal == SIGINT { #expect(stopped.output.contains("-C -"), "\(stopped.output)") }
            #expect(!FileManager.default.fileExists(atPath: file.path))
            #expect(FileManager.default.fileExists(atPath: partial))
            let kept = (try? FileManager.default.attributesOfItem(atPath: partial)[.size] as? Int) ?? 0
            #expect(kept > 0 && kept < Self.body.count)

            let rerun = try await CLITool.run(server, ["show", "files/big.bin", "-o", file.path, "-C", "-"])
            #expect(rerun.status == 0, "\(rerun.output)")
            let last = try #require(server.requests.last)
            #expect(last.headerFields[.range] == "bytes=\(kept)-")
            #expect(last.headerFields[.ifRange] == "\"v1\"")
            #expect(try Data(contentsOf: file) == Self.body)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["big.bin"])
        }
    }

    @Test func continueAtTakesOnlyADash() async throws {
        try await MockServer.withRunning { server in
            let result = try await CLITool.run(server, ["show", "files/big.bin", "-o", "/tmp/x", "-C", "100"])
            #expect(result.status == 64, "\(result.output)")
            #expect(result.output.contains("-C/--continue-at takes only '-'"), "\(result.output)")
            #expect(server.requests.isEmpty)
        }
    }

    @Test func maxFilesizeRefusesALargerBodyAndLeavesNothing() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await MockServer.withRunning { server in
            var response = MockResponse(headerFields: [.contentType: "application/octet-stream"])
            // No Content-Length: refused as the bytes come.
            response.parts = Array(repeating: Data(repeating: 1, count: 64 * 1024), count: 8)
            server.stub(.get, "/v1/files/chunked.bin", response)
            let result = try await CLITool.run(server, ["show", "files/chunked.bin", "-o", folder.appendingPathComponent("chunked.bin").path, "--max-filesize", "100000"])
            #expect(result.status != 0)
            #expect(result.output.contains("100000"), "\(result.output)")
            #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty == true)
        }
    }

    @Test func maxFilesizeTakesCurlsSuffixes() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await MockServer.withRunning { server in
            var response = MockResponse(headerFields: [.contentType: "application/octet-stream"])
            response.parts = Array(repeating: Data(repeating: 1, count: 64 * 1024), count: 8)
            server.stub(.get, "/v1/files/half.bin", response)
            let file = folder.appendingPathComponent("half.bin").path
            // 100k is 102,400 bytes: the 512 KiB body is refused; 1M (1,048,576) takes it.
            let refused = try await CLITool.run(server, ["show", "files/half.bin", "-o", file, "--max-filesize", "100k"])
            #expect(refused.status != 0 && refused.output.contains("102400"), "\(refused.output)")
            let taken = try await CLITool.run(server, ["show", "files/half.bin", "-o", file, "--max-filesize", "1M"])
            #expect(taken.status == 0, "\(taken.output)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: file)).count == 512 * 1024)
            let requests = server.requests.count
            for bad in ["5X", "-1", "1e3", "nan", "k", "1.", "99999999999T"] {
                let result = try await CLITool.run(server, ["show", "files/half.bin", "-o", file, "--max-filesize", bad])
                #expect(result.status == 64, "\(bad): \(result.output)")
            }
            #expect(server.requests.count == requests)
        }
    }

    /// A server that never stops sending, a byte at a time, well within each silence the
    /// configuration allows: `--timeout` ends `-o` and `--stream` as curl's `--max-time` would.
    @Test(arguments: [["-o", "dribble.bin"], ["--stream"]])
    func timeoutBoundsTheWholeTransfer(of arguments: [String]) async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await MockServer.withRunning { server in
            var response = MockResponse(headerFields: [.contentType: "application/octet-stream"])
            response.parts = Array(repeating: Data([0x41]), count: 1200)
            response.partDelay = .milliseconds(100)
            server.stub(.get, "/v1/files/dribble.bin", response)
            let output = arguments.map { $0 == "dribble.bin" ? folder.appendingPathComponent($0).path : $0 }
            let result = try await CLITool.run(server, ["show", "files/dribble.bin", "--timeout", "2"] + output)
            #expect(result.status == 4, "\(result.output)")
            // Two minutes of body: ended long before it, at the limit.
            #expect(result.duration < .seconds(60), "\(result.duration)")
        }
    }

    @Test func maxFilesizeHoldsForStandardOutputToo() async throws {
        try await MockServer.withRunning { server in
            var chunked = MockResponse(headerFields: [.contentType: "application/octet-stream"])
            chunked.parts = Array(repeating: Data(repeating: 1, count: 1000), count: 8)
            server.stub(.get, "/v1/files/chunked.bin", chunked)
            var sized = MockResponse(headerFields: [.contentType: "application/octet-stream", .contentLength: "8000"])
            sized.parts = Array(repeating: Data(repeating: 2, count: 1000), count: 8)
            server.stub(.get, "/v1/files/sized.bin", sized)
            for name in ["chunked.bin", "sized.bin"] {
                let result = try await CLITool.run(server, ["show", "files/\(name)", "-o", "-", "--max-filesize", "2500"])
                #expect(result.status != 0)
                #expect(result.output.contains("--max-filesize"), "\(result.output)")
                // No more than the cap reached standard output.
                #expect(result.output.utf8.filter { $0 == 1 || $0 == 2 }.count <= 2500)
            }
            let resumed = try await CLITool.run(server, ["show", "files/sized.bin", "-o", "-", "-C", "-"])
            #expect(resumed.status != 0)
            #expect(resumed.output.contains("does not go with --output -"), "\(resumed.output)")
        }
    }

    /// A configuration whose longest event or line is 64 bytes.
    static func smallStreamConfiguration(for server: MockServer) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let json = #"{"baseURL": "\#(server.baseURL.absoluteString)/v1", "service": "cli-test", "maxResponseBytes": 64}"#
        try Data(json.utf8).write(to: directory.appendingPathComponent("test.json"))
        return directory.path
    }

    @Test(arguments: [
        ("application/x-ndjson", "one\ntwo\n" + String(repeating: "x", count: 200) + "\nthree\n"),
        ("text/event-stream", "data: one\n\ndata: two\n\ndata: " + String(repeating: "x", count: 200) + "\n\ndata: three\n\n"),
    ])
    func streamPrintsEverythingCompleteBeforeAnOversizedEventOrLine(type: String, body: String) async throws {
        try await MockServer.withRunning { server in
            var response = MockResponse(headerFields: [.contentType: type])
            // One chunk: the short ones and the long one arrive together.
            response.parts = [Data(body.utf8)]
            server.stub(.get, "/v1/feed", response)
            let result = try await Command.run(
                resourcefulTool, ["show", "feed", "--stream", "--env", "test", "--config-directory", try Self.smallStreamConfiguration(for: server)]
            )
            #expect(result.status != 0)
            #expect(result.output.hasPrefix("one\ntwo\n"), "\(result.output)")
            #expect(!result.output.contains("three"))
            #expect(result.output.contains("longer than 64 bytes"), "\(result.output)")
        }
    }

    @Test func aBodyPastMaxResponseBytesPointsToOutputWhichTakesIt() async throws {
        try await MockServer.withRunning { server in
            let body = String(repeating: "y", count: 500)
            server.stub(.get, "/v1/large", MockResponse(headerFields: [.contentType: "text/plain"], body: Data(body.utf8)))
            let directory = try Self.smallStreamConfiguration(for: server)
            let shown = try await Command.run(resourcefulTool, ["show", "large", "--env", "test", "--config-directory", directory])
            #expect(shown.status == 4, "\(shown.output)")
            #expect(shown.output.contains("maxResponseBytes allows: write it to a file with -o FILE"), "\(shown.output)")
            // What it advises works: the body is written whole.
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-large-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: file) }
            let written = try await Command.run(resourcefulTool, ["show", "large", "-o", file.path, "--env", "test", "--config-directory", directory])
            #expect(written.status == 0, "\(written.output)")
            #expect(try String(contentsOf: file, encoding: .utf8) == body)
        }
    }

    @Test(arguments: ["UsersRequests.swift", "UsersSchemas.swift"])
    func generateWritesNoFileWhenAnyDestinationIsRefused(refused: String) async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let spec = GenerateCommandTests.specs.appending(path: "users.yaml").path
        let fifo = folder.appending(path: refused).path
        try #require(mkfifo(fifo, 0o600) == 0)
        let result = try await Command.run(resourcefulTool, ["generate", "--openapi", spec, "--output", folder.path, "--namespace", "Users"])
        #expect(result.status == 2, "\(result.output)")
        #expect(result.output.contains("\(fifo) is a FIFO, not a regular file"), "\(result.output)")
        // Neither the other file nor a temporary one was written.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [refused])
    }
}
