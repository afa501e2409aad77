import Foundation
import HTTPTypes
import ProcessTestSupport
import ResourcefulTesting
import Testing

#if canImport(Glibc)
import CDispatch
import CoreFoundation
import Glibc
#endif

/// Every file the tool writes (`--record`'s HAR, `generate`'s Swift files) replaces only a regular
/// file or nothing, leaves no temporary file, and never carries set-ID bits over.
@Suite struct OutputFileCommandTests {
    fileprivate func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appending(path: "resourceful-output-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    private func mode(_ path: String) -> mode_t {
        var status = stat()
        guard lstat(path, &status) == 0 else { return 0 }
        return status.st_mode
    }

    /// Ends a read that waits on `fifo` (the defect this suite pins) once `bound` has passed, so
    /// that it fails the test instead of hanging it.
    fileprivate func unblocking(_ fifo: String, after bound: Duration) -> Task<Void, Never> {
        Task.detached {
            try? await Task.sleep(for: bound)
            guard !Task.isCancelled else { return }
            let descriptor = open(fifo, O_WRONLY | O_NONBLOCK)
            if descriptor >= 0 { close(descriptor) }
        }
    }

    @Test func recordIntoAFolderThatIsNotThereIsRefusedWithoutMakingIt() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let har = folder.appending(path: "missing/deeper/capture.har").path
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/users/7", .json(raw: #"{"id":7,"name":"Ada"}"#))
            let result = try await CLITool.run(server, ["show", "users/7", "--record", har])
            #expect(result.status == 9, "\(result.output)")
            #expect(result.output.contains("the folder \(folder.path)/missing/deeper does not exist"), "\(result.output)")
            #expect(server.requests.isEmpty)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test func recordOntoAFIFOIsRefusedWithoutReadingIt() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = folder.appending(path: "capture.har").path
        #expect(mkfifo(fifo, 0o600) == 0)
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/users/7", .json(raw: #"{"id":7,"name":"Ada"}"#))
            let bound = Duration.seconds(30)
            let guardTask = unblocking(fifo, after: bound)
            defer { guardTask.cancel() }
            let result = try await CLITool.run(server, ["show", "users/7", "--record", fifo])
            #expect(result.duration < bound, "the FIFO was read")
            #expect(result.status != 0)
            #expect(result.output.contains("\(fifo) is a FIFO, not a regular file"), "\(result.output)")
            #expect(server.requests.isEmpty)
        }
        #expect(mode(fifo) & S_IFMT == S_IFIFO)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["capture.har"])
    }

    @Test func recordOntoASetUserIDFileKeepsItsPermissionsWithoutTheBit() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let har = folder.appending(path: "capture.har").path
        try Data(#"{"log": {"version": "1.2", "creator": {"name": "x", "version": "1"}, "entries": []}}"#.utf8).write(to: URL(fileURLWithPath: har))
        #expect(chmod(har, 0o4755) == 0)
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/users/7", .json(raw: #"{"id":7,"name":"Ada"}"#))
            let result = try await CLITool.run(server, ["show", "users/7", "--record", har])
            #expect(result.status == 0, "\(result.output)")
        }
        #expect(mode(har) & S_IFMT == S_IFREG)
        #expect(mode(har) & 0o7777 == 0o755, "mode 0\(String(mode(har) & 0o7777, radix: 8))")
        #expect(try String(contentsOfFile: har, encoding: .utf8).contains("/v1/users/7"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["capture.har"])
    }

    @Test func aRecordingCutShortByAFullDiskStaysAValidHARWithEveryEntryBefore() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let har = folder.appending(path: "capture.har").path
        let body = #"{"id":7,"notes":"\#(String(repeating: "n", count: 20_000))"}"#
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/users/7", .json(raw: body), .json(raw: body))
            let first = try await CLITool.run(server, ["show", "users/7", "--record", har])
            #expect(first.status == 0, "\(first.output)")
            let before = try Data(contentsOf: URL(fileURLWithPath: har))
            // A file size limit a few KiB past what the file holds: the second entry is cut part
            // way, as on a full disk. The shell ignores SIGXFSZ so the write fails with EFBIG
            // instead of ending the tool, and the tool inherits that.
            let limit = before.count + 4096
            let arguments = ["-c", #"trap "" XFSZ; exec prlimit --fsize=$0 -- "$@""#, "\(limit)", resourcefulTool, "show", "users/7", "--record", har]
                + ["--env", "test", "--config-directory", try CLITool.configDirectory(for: server)]
            let cut = try await Command.run("/bin/sh", arguments)
            #expect(cut.status != 0 && cut.status < 128, "\(cut.status): \(cut.output)")
            #expect(cut.output.contains("\(har) could not be written: File too large"), "\(cut.output)")
            #expect(server.requests.count == 2)
            // Read by a HAR reader of another's: the first entry, whole, and nothing of the second.
            let read = try await Command.run("/usr/bin/python3", ["-c", #"import json,sys; print(len(json.load(open(sys.argv[1]))["log"]["entries"]))"#, har])
            #expect(read.status == 0 && read.output == "1\n", "\(read.output)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: har)) == before)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["capture.har"])
    }

    @Test func generateOntoAFIFOIsRefusedAndLeavesNoTemporaryFile() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let spec = GenerateCommandTests.specs.appending(path: "users.yaml").path
        let fifo = folder.appending(path: "UsersRequests.swift").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let guardTask = unblocking(fifo, after: .seconds(30))
        defer { guardTask.cancel() }
        let result = try await Command.run(resourcefulTool, ["generate", "--openapi", spec, "--output", folder.path, "--namespace", "Users"])
        #expect(result.status == 2, "\(result.output)")
        #expect(result.output.contains("\(fifo) is a FIFO, not a regular file"), "\(result.output)")
        #expect(mode(fifo) & S_IFMT == S_IFIFO)
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix(".") }
        #expect(left.isEmpty, "\(left)")
    }

    @Test func generateOntoSetUserIDFilesKeepsTheirPermissionsWithoutTheBit() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let spec = GenerateCommandTests.specs.appending(path: "users.yaml").path
        let names = ["UsersRequests.swift", "UsersSchemas.swift"]
        for name in names {
            let path = folder.appending(path: name).path
            try Data("#!/bin/sh\n".utf8).write(to: URL(fileURLWithPath: path))
            #expect(chmod(path, 0o6755) == 0)
        }
        let result = try await Command.run(resourcefulTool, ["generate", "--openapi", spec, "--output", folder.path, "--namespace", "Users"])
        #expect(result.status == 0, "\(result.output)")
        for name in names {
            let path = folder.appending(path: name).path
            #expect(mode(path) & 0o7777 == 0o755, "\(name): mode 0\(String(mode(path) & 0o7777, radix: 8))")
            #expect(try String(contentsOfFile: path, encoding: .utf8).contains("Users"))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == names)
    }
}

extension OutputFileCommandTests {
    @Test func replayFromAFIFOIsRefusedWithoutReadingIt() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = folder.appending(path: "capture.har").path
        #expect(mkfifo(fifo, 0o600) == 0)
        try await MockServer.withRunning { server in
            let bound = Duration.seconds(30)
            let guardTask = unblocking(fifo, after: bound)
            defer { guardTask.cancel() }
            let result = try await CLITool.run(server, ["show", "users/7", "--replay", fifo])
            #expect(result.duration < bound, "the FIFO was read")
            #expect(result.status != 0)
            #expect(result.output.contains("not a regular file"), "\(result.output)")
        }
    }
}
