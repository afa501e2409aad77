import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

/// The tool on a terminal, as a person runs it: a pseudo-terminal (Python's `pty`) that shows the
/// progress bar and turns a typed Ctrl-C into the terminal's interrupt.
@Suite struct TerminalSessionTests {
    /// Runs the tool with `arguments` on a new pseudo-terminal; once `waitFor` was written to it,
    /// types Ctrl-C (with `waitFor` empty, lets the tool end by itself); returns what the terminal
    /// showed and the exit status (the signal's negative number when a signal ended it).
    static func onTerminal(_ arguments: [String], waitFor: String) async throws -> (shown: String, status: Int) {
        let driver = """
            import json, os, pty, select, sys, time
            tool, wait_for, args = sys.argv[1], sys.argv[2].encode(), sys.argv[3:]
            pid, fd = pty.fork()
            if pid == 0:
                os.execv(tool, [tool] + args)
            shown, typed, deadline = b"", False, time.monotonic() + 60
            while time.monotonic() < deadline:
                ready, _, _ = select.select([fd], [], [], 0.05)
                if ready:
                    try:
                        data = os.read(fd, 65536)
                    except OSError:
                        break
                    if not data:
                        break
                    shown += data
                if not typed and wait_for and wait_for in shown:
                    os.write(fd, b"\\x03")
                    typed = True
            _, status = os.waitpid(pid, 0)
            print(json.dumps({"shown": shown.decode("utf-8", "replace"), "status": os.waitstatus_to_exitcode(status), "typed": typed}))
            """
        let result = try await Command.run("/usr/bin/python3", ["-c", driver, resourcefulTool, waitFor] + arguments)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any], "\(result.output)")
        #expect(report["typed"] as? Bool == !waitFor.isEmpty, "Ctrl-C was typed \(waitFor.isEmpty ? "" : "never "): \(report["shown"] ?? "")")
        return (report["shown"] as? String ?? "", report["status"] as? Int ?? 0)
    }

    @Test func ctrlCDuringADownloadOnATerminalRemovesItsTemporaryFileAfterTheBarWasShown() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-terminal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("big.bin")
        try await MockServer.withRunning { server in
            // 8 MiB in 1 KiB parts, 20 ms apart: minutes, so the interrupt comes mid-body.
            let body = Data(repeating: 7, count: 8 << 20)
            server.route(.get, "/v1/files/big.bin") { _ in
                var response = MockResponse(headerFields: [.contentLength: String(body.count)])
                response.parts = stride(from: 0, to: body.count, by: 1024).map { body[$0..<min($0 + 1024, body.count)] }
                response.partDelay = .milliseconds(20)
                return response
            }
            let (shown, status) = try await Self.onTerminal(
                ["show", "files/big.bin", "-o", file.path, "--env", "test", "--config-directory", try CLITool.configDirectory(for: server)],
                waitFor: "% "
            )
            // The bar was drawn on the terminal: "[###   ] 1% 96.0 KiB of 8.0 MiB".
            #expect(shown.contains("] ") && shown.contains(" of 8.0 MiB"), "\(shown)")
            #expect(status != 0)
            // Nothing left behind: no file, no temporary one.
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        }
    }

    @Test func silentDrawsNoBarOnATerminal() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-silent-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await MockServer.withRunning { server in
            let body = Data(repeating: 7, count: 256 << 10)
            server.route(.get, "/v1/files/part.bin") { _ in
                var response = MockResponse(headerFields: [.contentLength: String(body.count)])
                response.parts = stride(from: 0, to: body.count, by: 16 << 10).map { body[$0..<min($0 + (16 << 10), body.count)] }
                response.partDelay = .milliseconds(20)
                return response
            }
            let directory = try CLITool.configDirectory(for: server)
            for silent in [false, true] {
                let file = folder.appendingPathComponent("part-\(silent).bin")
                let (shown, status) = try await Self.onTerminal(
                    ["show", "files/part.bin", "-o", file.path, "--env", "test", "--config-directory", directory] + (silent ? ["-s"] : []),
                    waitFor: ""
                )
                #expect(status == 0, "\(shown)")
                #expect(try Data(contentsOf: file) == body)
                // The bar ("] 100% 256.0 KiB of 256.0 KiB") without -s, nothing with it.
                #expect(shown.contains(" of 256.0 KiB") == !silent, "\(silent): \(shown)")
            }
        }
    }

    @Test func rawBytesAreNotWrittenToATerminalButTheBodyIsShownEscaped() async throws {
        try await MockServer.withRunning { server in
            // A body that would set the terminal's title and clear its screen if written raw.
            let body = "line one\u{1B}]0;owned\u{07}\u{1B}[2J line two\n"
            server.stub(.get, "/v1/notes", MockResponse(headerFields: [.contentType: "text/plain"], body: Data(body.utf8)))
            let directory = try CLITool.configDirectory(for: server)
            let (raw, rawStatus) = try await Self.onTerminal(["show", "notes", "-o", "-", "--env", "test", "--config-directory", directory], waitFor: "")
            #expect(rawStatus == 9, "\(raw)")
            #expect(raw.contains("standard output is a terminal") && raw.contains("leave out --output"), "\(raw)")
            #expect(!raw.contains("line one"), "\(raw)")
            let (shown, status) = try await Self.onTerminal(["show", "notes", "--env", "test", "--config-directory", directory], waitFor: "")
            #expect(status == 0, "\(shown)")
            #expect(shown.contains("line one") && shown.contains("line two"), "\(shown)")
            #expect(!shown.contains("\u{1B}]0;") && !shown.contains("\u{1B}[2J"), "\(shown)")
        }
    }
}
