import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

@testable import resourceful

#if canImport(Glibc)
import CDispatch
import CoreFoundation
import Glibc
#endif

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

    @Test func theProgressBarClampsEveryCount() {
        let cases: [(Int, Int?)] = [
            (10 << 20, 4 << 20), (-5, 100), (5, -100), (Int.max, 1), (Int.min, Int.max), (Int.max, Int.max), (0, 0), (-1, nil), (Int.max, nil),
        ]
        for (written, total) in cases {
            let line = ProgressBar.line(bytesWritten: written, totalBytes: total)
            #expect(!line.isEmpty)
            if let total, total > 0 {
                let bar = line.drop { $0 == "[" }.prefix { $0 != "]" }
                #expect(bar.count == ProgressBar.width, "\(written) of \(total): \(line)")
                let percent = line.split(separator: "]").last?.split(separator: "%").first.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
                #expect(percent.map { (0...100).contains($0) } == true, "\(written) of \(total): \(line)")
            }
        }
        #expect(ProgressBar.line(bytesWritten: 10 << 20, totalBytes: 4 << 20).hasPrefix("[" + String(repeating: "#", count: ProgressBar.width) + "] 100%"))
        #expect(ProgressBar.size(-3) == "0 B")
    }

    @Test func outputOntoAFIFOOrADeviceIsRefusedAndLeavesItAlone() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-cli-output-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = folder.appendingPathComponent("pipe").path
        try #require(mkfifo(fifo, 0o644) == 0)
        let device = folder.appendingPathComponent("null").path
        var targets = [fifo]
        // A device of /dev/null's numbers when this may make one (root).
        if mknod(device, S_IFCHR | 0o666, dev_t((1 << 8) | 3)) == 0 { targets.append(device) }
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/files/asset.bin", MockResponse(body: Data("payload".utf8)))
            for target in targets {
                let result = try await CLITool.run(server, ["show", "files/asset.bin", "--output", target])
                #expect(result.status != 0)
                #expect(result.output.contains(target), "\(result.output)")
                #expect(result.output.contains("not a regular file"), "\(result.output)")
            }
            #expect(server.requests.isEmpty)
        }
        var status = stat()
        #expect(lstat(fifo, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO)
        if targets.count == 2 { #expect(lstat(device, &status) == 0 && status.st_mode & S_IFMT == S_IFCHR) }
    }

    @Test func outputDashWritesTheBodyToStandardOutput() async throws {
        try await MockServer.withRunning { server in
            var response = MockResponse(headerFields: [.contentType: "application/octet-stream"])
            response.parts = [Data("first part, ".utf8), Data("second part".utf8)]
            server.stub(.get, "/v1/files/asset.bin", response)
            let result = try await CLITool.run(server, ["show", "files/asset.bin", "--output", "-"])
            #expect(result.status == 0)
            #expect(result.output == "first part, second part")
            #expect(!FileManager.default.fileExists(atPath: "-"))
        }
    }

    /// Ctrl-C, `kill`, a closed terminal, `SIGQUIT` and every other signal that would end the
    /// process alike (`SIGALRM`, `SIGUSR1`, a real-time signal…); `SIGPIPE` is ignored.
    @Test(arguments: [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE, SIGXFSZ, SIGVTALRM, SIGPWR, __libc_current_sigrtmin() + 2])
    func anInterruptedDownloadLeavesNoTemporaryFile(signal: Int32) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-cli-output-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await MockServer.withRunning { server in
            // 200 KiB, a KiB every 50 ms: ten seconds, far longer than the test waits.
            var response = MockResponse(headerFields: [.contentLength: String(200 * 1024)])
            response.parts = Array(repeating: Data(repeating: 7, count: 1024), count: 200)
            response.partDelay = .milliseconds(50)
            server.stub(.get, "/v1/files/slow.bin", response)
            let command = try RunningCommand(
                resourcefulTool,
                ["show", "files/slow.bin", "--output", folder.appendingPathComponent("slow.bin").path, "--env", "test", "--config-directory", try CLITool.configDirectory(for: server)]
            )
            // Poll until the body is arriving into the temporary file.
            let giveUp = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < giveUp {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
                if server.bodyBytesSent > 0, names.contains(where: { $0.hasSuffix(".download") }) { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            try #require(((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).contains { $0.hasSuffix(".download") })
            command.send(signal: signal)
            let result = try await command.finish()
            guard signal != SIGPIPE else {
                // Ignored, as curl ignores it: the download goes on to its end, whole.
                #expect(result.status == 0, "\(result.output)")
                #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) == ["slow.bin"])
                return
            }
            #expect(result.status != 0)
            #expect(server.bodyBytesSent < 200 * 1024)
            #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty == true)
        }
    }

    @Test func streamAfterALongLineRunsInBoundedMemory() async throws {
        // 8 MiB of one line, then 16 chunks of 16,384 short lines, to a tool allowed 4 GiB of
        // address space: before, each short line reserved a buffer as large as the long one.
        var longLine = Data("7".utf8)
        longLine.append(Data(repeating: UInt8(ascii: " "), count: (8 << 20) - 1))
        longLine.append(0x0A)
        let chunk = Data(String(repeating: "1\n", count: 16384).utf8)
        try await MockServer.withRunning { server in
            var response = MockResponse(headerFields: [.contentType: "application/x-ndjson"])
            response.parts = [longLine] + Array(repeating: chunk, count: 16)
            server.stub(.get, "/v1/rows", response)
            let result = try await Command.run(
                "/usr/bin/prlimit",
                ["--as=\(4 << 30)", resourcefulTool, "index", "rows", "--stream", "--env", "test", "--config-directory", try CLITool.configDirectory(for: server)]
            )
            #expect(result.status == 0, "\(result.output.suffix(500))")
            #expect(result.output.split(separator: "\n").count == 1 + 16 * 16384)
        }
    }

    @Test func aHostile206OnATerminalFailsCleanlyAndLeavesNoFile() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-cli-output-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let size = 4 << 20
        try await MockServer.withRunning { server in
            // A 200 cut half-way, then a 206 for the rest that sends twice as much, chunked.
            server.route(.get, "/v1/files/big.bin") { request in
                guard let range = request.headerFields[.range], let first = Int(range.dropFirst(6).dropLast()) else {
                    var cut = MockResponse(headerFields: [.eTag: "\"v1\"", .contentLength: String(size)], fault: .closeMidBody(bytes: size / 2))
                    cut.parts = (0..<4).map { _ in Data(repeating: 1, count: size / 4) }
                    return cut
                }
                var long = MockResponse(status: .partialContent, headerFields: [.contentRange: "bytes \(first)-\(size - 1)/\(size)", .eTag: "\"v1\""])
                long.parts = (0..<32).map { _ in Data(repeating: 2, count: 256 << 10) }
                return long
            }
            let arguments = ["show", "files/big.bin", "--output", folder.appendingPathComponent("big.bin").path, "--env", "test", "--config-directory", try CLITool.configDirectory(for: server)]
            // Under script(1), standard error is a terminal: the progress bar is drawn.
            let command = ([resourcefulTool] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
            let result = try await Command.run("/usr/bin/script", ["-qec", command, "/dev/null"])
            #expect(result.status == 4, "\(result.output.suffix(300))")
            #expect(result.output.contains("runs past"))
            #expect(!result.output.contains("Fatal error"))
            #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty == true)
        }
    }
}
