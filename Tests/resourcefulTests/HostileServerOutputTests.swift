import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

@testable import resourceful

#if canImport(Glibc)
import Glibc
#endif

/// What the tool prints when a server is hostile and standard output misbehaves: a closed pipe
/// or a full disk never crashes it, a server's text reaches a terminal escaped (headers with
/// `-i`, lines with `--stream`), an error body or a deeply nested JSON body costs what is shown,
/// and `-C -` offers only a part this run kept.
@Suite struct HostileServerOutputTests {
    /// Runs the tool against `server` with standard output `output` (closed at once when `nil`:
    /// a pipe whose reader is gone), standard error captured.
    private static func run(_ server: MockServer, _ arguments: [String], output: FileHandle?) async throws -> (status: Int32, exited: Bool, error: String) {
        let full = arguments + ["--env", "test", "--config-directory", try CLITool.configDirectory(for: server)]
        return try await onOwnThread {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: resourcefulTool)
            process.arguments = full
            let closed = Pipe()
            let error = Pipe()
            if let output {
                process.standardOutput = output
            } else {
                try closed.fileHandleForReading.close()
                process.standardOutput = closed
            }
            process.standardError = error
            process.standardInput = FileHandle.nullDevice
            try process.run()
            try? error.fileHandleForWriting.close()
            try? closed.fileHandleForWriting.close()
            let text = error.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, process.terminationReason == .exit, String(decoding: text, as: UTF8.self))
        }
    }

    private static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test func aRedirectLoopExitsAsARefusedRedirect() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/a", MockResponse(status: .found, headerFields: [.location: "/v1/b"]))
            server.stub(.get, "/v1/b", MockResponse(status: .found, headerFields: [.location: "/v1/a"]))
            let result = try await CLITool.run(server, ["show", "a"])
            #expect(result.status == 8, "\(result.output)")
            #expect(result.output.contains("more than 5 redirects, or a loop"), "\(result.output)")
        }
    }

    @Test func includeWithAClosedStandardOutputDownloadsAndLeavesNoTemporaryFile() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = Data(repeating: 0x41, count: 256 * 1024)
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/files/c9", MockResponse(headerFields: [.contentType: "application/octet-stream"], body: body))
            let file = folder.appendingPathComponent("c9")
            let result = try await Self.run(server, ["show", "files/c9", "-i", "-o", file.path], output: nil)
            #expect(result.exited, "ended by a signal: \(result.status) \(result.error)")
            #expect(result.status == 0, "\(result.error)")
            #expect(try Data(contentsOf: file) == body)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["c9"])
        }
    }

    @Test(arguments: [["show", "items"], ["show", "items", "-i"], ["show", "items", "-o", "-"], ["show", "items", "--stream"]])
    func aFullDiskOnStandardOutputIsALocalFileError(arguments: [String]) async throws {
        let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
        defer { try? full.close() }
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/items", MockResponse(headerFields: [.contentType: "application/json"], body: Data("[{\"id\":1},{\"id\":2}]\n".utf8)))
            let result = try await Self.run(server, arguments, output: full)
            #expect(result.exited, "ended by a signal: \(result.status) \(result.error)")
            #expect(result.status == 9, "\(result.error)")
            #expect(result.error.contains("standard output could not be written"), "\(result.error)")
        }
    }

    /// The tool run on a terminal (script(1)); its output with CR LF line ends as LF.
    private static func onTerminal(_ server: MockServer, _ arguments: [String]) async throws -> Command.Result {
        let full = [resourcefulTool] + arguments + ["--env", "test", "--config-directory", try CLITool.configDirectory(for: server)]
        let command = full.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        var result = try await Command.run("/usr/bin/script", ["-qec", command, "/dev/null"])
        result.output = result.output.replacingOccurrences(of: "\r\n", with: "\n")
        return result
    }

    @Test func headersAndStreamedLinesReachATerminalEscaped() async throws {
        try await MockServer.withRunning { server in
            var fields: HTTPFields = [.contentType: "application/x-ndjson"]
            fields[HTTPField.Name("X-Name")!] = "invoice\u{202E}fdp.exe"
            fields[HTTPField.Name("X-Zw")!] = "a\u{200B}b"
            var response = MockResponse(headerFields: fields)
            response.parts = [Data("l1\u{202E}abc\n\u{1B}[31mred\nzero\u{200B}width\u{2066}\n".utf8)]
            server.stub(.get, "/v1/rows", response)
            let head = try await Self.onTerminal(server, ["show", "rows", "-i"])
            #expect(head.status == 0, "\(head.output)")
            #expect(head.output.contains("invoice\\u{202e}fdp.exe"), "\(head.output)")
            #expect(head.output.contains("a\\u{200b}b"), "\(head.output)")
            let stream = try await Self.onTerminal(server, ["show", "rows", "--stream"])
            #expect(stream.status == 0, "\(stream.output)")
            #expect(stream.output.contains("l1\\u{202e}abc\n\\x1b[31mred\nzero\\u{200b}width\\u{2066}\n"), "\(stream.output)")
            for output in [head.output, stream.output] {
                #expect(!output.unicodeScalars.contains { $0 == "\u{202E}" || $0 == "\u{200B}" || $0 == "\u{2066}" || $0 == "\u{1B}" })
            }
        }
    }

    @Test func headerTextIsEscapedOnOneLine() {
        #expect(ResponseHeadPrinter.printable("a\u{202E}b\u{200B}c\u{9B}d\ne\u{1B}]0;x\u{7}") == "a\\u{202e}b\\u{200b}c\\x9bd\\x0ae\\x1b]0;x\\x07")
    }

    /// Depth-64 arrays of `count` two-byte elements: indented, each element takes 131 bytes.
    private static func deepArrays(_ count: Int) -> [UInt8] {
        Array(String(repeating: "[", count: 64).utf8) + Array(Array(repeating: "0", count: count).joined(separator: ",").utf8)
            + Array(String(repeating: "]", count: 64).utf8)
    }

    @Test func anErrorBodyIsFormattedOnlyAsFarAsItIsShown() throws {
        let body = Self.deepArrays(400_000)
        let shown = try #require(CallReport.errorBody(body))
        let note = try #require(shown.split(separator: "\n").last)
        // The bytes of the body not shown, not those its whole indented form would take.
        let unread = try #require(Int(note.dropFirst("… (".count).prefix { $0.isNumber }))
        #expect(note.hasSuffix("more bytes not shown)"), "\(note)")
        #expect(unread < body.count && unread > body.count - CallReport.maxBodyBytes, "\(note)")
        #expect(shown.utf8.count < CallReport.maxBodyBytes + 100)

        // Text: the count is of the body's bytes too.
        let text = Array(String(repeating: "\u{1B}x", count: 10_000).utf8)
        let escaped = try #require(CallReport.errorBody(text))
        let textNote = try #require(escaped.split(separator: "\n").last)
        let textUnread = try #require(Int(textNote.dropFirst("… (".count).prefix { $0.isNumber }))
        // Each 2-byte pair shows as 5 bytes: about 8 KiB / 5 × 2 bytes are shown.
        #expect(textUnread >= text.count - 2 * (CallReport.maxBodyBytes / 5) - 4 && textUnread <= text.count - 2 * (CallReport.maxBodyBytes / 5) + 4, "\(textNote)")
        #expect(!escaped.unicodeScalars.contains("\u{1B}"))

        // A small body is shown whole, without a note.
        #expect(CallReport.errorBody(Array(#"{"error":"no"}"#.utf8)) == "{\n  \"error\": \"no\"\n}")
    }

    @Test func indentationNeverMultipliesABodyPastItsBound() throws {
        let deep = Self.deepArrays(100_000)
        #expect(!JSONFormatter.format(deep, colours: false, to: { _ in true }))
        #expect(JSONFormatter.formatted(deep) == nil)
        // A long flat array is indented 2.5 times its size: formatted, in colour too.
        let flat = Array(("[" + Array(repeating: "1", count: 100_000).joined(separator: ",") + "]").utf8)
        #expect(JSONFormatter.formatted(flat, colours: true) != nil)
        // Within the bound, the size counted without writing is the size written.
        let documents = [
            Self.deepArrays(10), Array(#"{"a":"x\u202ey","b":"é\u200b","c":[1,2.5e3,true,null,{}],"d":"\u0001"}"#.utf8),
            Array("{\"raw\":\"\u{202E}\u{9B}é\"}".utf8),
        ]
        for document in documents {
            for colours in [false, true] {
                let text = try #require(JSONFormatter.formatted(document, colours: colours))
                #expect(JSONFormatter.outputSize(document, colours: colours) == text.utf8.count)
            }
        }
        // A sink that stops is handed nothing more.
        var pieces = 0
        let long = Array(("[" + Array(repeating: "0", count: 100_000).joined(separator: ",") + "]").utf8)
        #expect(JSONFormatter.format(long, colours: false, to: { _ in
            pieces += 1
            return false
        }))
        #expect(pieces == 1)
    }

    @Test func aDeeplyNestedBodyIsPrintedAsItIs() async throws {
        try await MockServer.withRunning { server in
            let body = Data(Self.deepArrays(100_000))
            server.stub(.get, "/v1/deep", MockResponse(headerFields: [.contentType: "application/json"], body: body))
            let result = try await Command.run(
                resourcefulTool, ["show", "deep", "--env", "test", "--config-directory", try CLITool.configDirectory(for: server)]
            )
            #expect(result.status == 0)
            #expect(Data(result.output.utf8) == body)
        }
    }

    /// Serves a KiB every 20 ms with `ETag "v1"`: a download that takes ten seconds.
    private static func serveSlowly(_ server: MockServer) {
        var response = MockResponse(headerFields: [.contentType: "application/octet-stream", .eTag: "\"v1\"", .contentLength: String(512 * 1024)])
        response.parts = Array(repeating: Data(repeating: 7, count: 1024), count: 512)
        response.partDelay = .milliseconds(20)
        server.stub(.get, "/v1/files/big.bin", response)
    }

    @Test func continueAtOffersOnlyAPartThisRunKept() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("big.bin")
        let partial = DownloadOptions.partialFile(for: file).path
        try await MockServer.withRunning { server in
            Self.serveSlowly(server)
            let configuration = try CLITool.configDirectory(for: server)
            let arguments = ["show", "files/big.bin", "-o", file.path, "-C", "-", "--env", "test", "--config-directory", configuration]
            let first = try RunningCommand(resourcefulTool, arguments)
            let giveUp = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < giveUp {
                let size = (try? FileManager.default.attributesOfItem(atPath: partial)[.size] as? Int) ?? 0
                if size > 0, FileManager.default.fileExists(atPath: DownloadOptions.partialStateFile(for: file).path) { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            // Refused: the part is the first run's, which holds it.
            let second = try await Command.run(resourcefulTool, arguments)
            #expect(second.status != 0)
            #expect(!second.output.contains("to resume"), "\(second.output)")
            first.send(signal: SIGINT)
            let stopped = try await first.finish()
            #expect(stopped.output.contains("run the same command with -C - to resume"), "\(stopped.output)")
        }

        // A part that is a hard link (planted, not this run's) is refused and not offered.
        let planted = folder.appendingPathComponent("other")
        try Data(repeating: 1, count: 1000).write(to: planted)
        try? FileManager.default.removeItem(atPath: partial)
        try? FileManager.default.removeItem(atPath: DownloadOptions.partialStateFile(for: file).path)
        #expect(link(planted.path, partial) == 0)
        try await MockServer.withRunning { server in
            Self.serveSlowly(server)
            let result = try await CLITool.run(server, ["show", "files/big.bin", "-o", file.path, "-C", "-"])
            #expect(result.status != 0)
            #expect(!result.output.contains("to resume"), "\(result.output)")
        }
    }

    @Test func aPartIsOfferedOnlyWhenStoppedAndOwnWithItsState() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("f.bin")
        let partial = DownloadOptions.partialFile(for: file).path
        let state = DownloadOptions.partialStateFile(for: file).path
        try Data(repeating: 1, count: 100).write(to: URL(fileURLWithPath: partial))
        let cancelled = APIError(kind: .cancelled)
        // No state file: not a part a resumable download wrote.
        #expect(await StreamOutput.keptPart(after: cancelled, for: file) == nil)
        try Data("{}".utf8).write(to: URL(fileURLWithPath: state))
        #expect(await StreamOutput.keptPart(after: cancelled, for: file)?.size == 100)
        // Refused rather than stopped.
        #expect(await StreamOutput.keptPart(after: APIError(kind: .file, detail: "held by another download"), for: file) == nil)
        #expect(await StreamOutput.keptPart(after: APIError(kind: .responseTooLarge), for: file) == nil)
        // A second link to the part.
        #expect(link(partial, folder.appendingPathComponent("second").path) == 0)
        #expect(await StreamOutput.keptPart(after: cancelled, for: file) == nil)
    }
}
