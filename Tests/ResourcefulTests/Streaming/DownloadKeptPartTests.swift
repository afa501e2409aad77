import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

#if canImport(Glibc)
import CDispatch
import CoreFoundation
import Glibc
#endif

/// `DownloadOptions.keepsPartialFile` (curl's `-C -`) keeps what a download wrote when the
/// local disk fails it (too little room, full while writing): the user asked to resume, and the
/// error says where the part is; a `206` that does not continue a kept part starts the body
/// again, as a `416` does, rather than lose the download.
@Suite struct DownloadKeptPartTests {
    static let request = DownloadResumeTests.request
    static let keeping = DownloadResumeTests.keeping

    static func size(_ path: String) -> Int? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        return Int(status.st_size)
    }

    /// The bytes free on the file system of `path`.
    static func free(_ path: String) -> Int {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return 0 }
        return Int(info.f_bavail) * Int(info.f_frsize)
    }

    /// Fills the file system of `folder` with the file `filler` until at most `leaving` bytes are free.
    static func fill(_ folder: URL, leaving: Int) throws {
        let descriptor = open(folder.appendingPathComponent("filler").path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let block = [UInt8](repeating: 0x5A, count: 4096)
        while free(folder.path) > leaving {
            let result = block.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard result > 0 else { break }
        }
    }

    @Test(.enabled(if: SmallDisk.available, "needs root to mount a tmpfs"), .timeLimit(.minutes(2)))
    func aPartThatDoesNotFitTheDiskIsKeptAndSaysSo() async throws {
        try await SmallDisk.with(megabytes: 4) { folder in
            let destination = folder.appendingPathComponent("asset.bin")
            let partial = DownloadOptions.partialFile(for: destination).path
            let state = DownloadOptions.partialStateFile(for: destination).path
            try await Harness.run { harness in
                DownloadResumeTests.serve(harness.server)
                let stopped = try await DownloadResumeTests.interrupted(harness.api, harness.server, to: destination, after: 200_000)
                #expect(stopped?.kind == .cancelled)
                let kept = try #require(Self.size(partial))
                #expect(kept > 0 && kept < DownloadTests.content.count)
                // The rest of the body no longer fits: refused before a byte is written, the part kept.
                try Self.fill(folder, leaving: 64 * 1024)
                let error = await #expect(throws: APIError.self) {
                    _ = try await harness.api.download(Self.request, to: destination, options: Self.keeping)
                }
                #expect(error?.kind == .file)
                #expect(error?.detail?.contains("kept in \(partial)") == true)
                #expect(Self.size(partial) == kept)
                #expect(Self.size(state) != nil)
                // Room made: the next run resumes the part.
                try FileManager.default.removeItem(at: folder.appendingPathComponent("filler"))
                let result = try await harness.api.download(Self.request, to: destination, options: Self.keeping)
                #expect(result.status == .partialContent)
                #expect(try Data(contentsOf: destination) == DownloadTests.content)
            }
        }
    }

    @Test(.enabled(if: SmallDisk.available, "needs root to mount a tmpfs"), .timeLimit(.minutes(2)))
    func aDiskThatFillsWhileWritingKeepsThePart() async throws {
        try await SmallDisk.with(megabytes: 4) { folder in
            let destination = folder.appendingPathComponent("asset.bin")
            let partial = DownloadOptions.partialFile(for: destination).path
            try await Harness.run { harness in
                DownloadResumeTests.serve(harness.server)
                let api = harness.api
                let work = Task { try await api.download(Self.request, to: destination, options: Self.keeping) }
                let giveUp = ContinuousClock.now + .seconds(60)
                while harness.server.bodyBytesSent < 200_000, ContinuousClock.now < giveUp {
                    try await Task.sleep(for: .milliseconds(10))
                }
                // Another program takes every byte left: the next write meets ENOSPC.
                try Self.fill(folder, leaving: 0)
                let error = await #expect(throws: APIError.self) { _ = try await work.value }
                #expect(error?.kind == .file)
                #expect(error?.detail?.contains("kept in \(partial)") == true)
                let kept = try #require(Self.size(partial))
                #expect(kept > 0)
                #expect(Self.size(DownloadOptions.partialStateFile(for: destination).path) != nil)
                try FileManager.default.removeItem(at: folder.appendingPathComponent("filler"))
                let result = try await harness.api.download(Self.request, to: destination, options: Self.keeping)
                #expect(result.status == .partialContent)
                #expect(try Data(contentsOf: destination) == DownloadTests.content)
            }
        }
    }

    @Test(arguments: Disagreement.allCases)
    func aKeptPartA206DoesNotContinueStartsAgain(disagreement: Disagreement) async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("asset.bin")
        try await Harness.run { harness in
            DownloadResumeTests.serve(harness.server)
            _ = try await DownloadResumeTests.interrupted(harness.api, harness.server, to: destination, after: 200_000)
            let kept = try #require(Self.size(DownloadOptions.partialFile(for: destination).path))
            // A cache in front of the server answers a range of its own: a 206 that does not
            // continue the kept part. Without a Range, the whole body.
            harness.server.route(.get, "/v1/asset") { request in
                let content = DownloadTests.content
                guard request.headerFields[.range] != nil else {
                    var response = MockResponse(headerFields: [.eTag: "\"v1\"", .contentLength: String(content.count)])
                    response.body = content
                    return response
                }
                var fields: HTTPFields = [.eTag: "\"v1\"", .contentRange: "bytes \(kept)-\(content.count - 1)/\(content.count)"]
                var body = content[kept...]
                switch disagreement {
                case .otherVersion: fields[.eTag] = "\"v2\""
                case .otherRange:
                    fields[.contentRange] = "bytes 0-\(content.count - 1)/\(content.count)"
                    body = content[...]
                case .otherSize: fields[.contentRange] = "bytes \(kept)-\(content.count - 1)/\(content.count + 10)"
                }
                fields[.contentLength] = String(body.count)
                var response = MockResponse(status: .partialContent, headerFields: fields)
                response.body = Data(body)
                return response
            }
            let result = try await harness.api.download(Self.request, to: destination, options: Self.keeping)
            #expect(result.status == .ok)
            #expect(try Data(contentsOf: destination) == DownloadTests.content)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["asset.bin"])
            #expect(harness.server.requests.count(where: { $0.headerFields[.range] == nil }) >= 1)
        }
    }

    enum Disagreement: CaseIterable, Sendable {
        case otherVersion, otherRange, otherSize
    }
}

/// A tmpfs of a few megabytes, mounted for one test: a disk that fills.
enum SmallDisk {
    /// Whether this process may mount one (root).
    static let available: Bool = geteuid() == 0

    /// Mounts a tmpfs of `megabytes` on a new folder, runs `body` with it, and unmounts it
    /// whatever `body` does.
    static func with(megabytes: Int, _ body: (URL) async throws -> Void) async throws {
        let base = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: base) }
        let folder = base.appendingPathComponent("disk")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let options = "size=\(megabytes)m,mode=0700"
        guard options.withCString({ mount("resourceful-small", folder.path, "tmpfs", 0, $0) }) == 0 else {
            Issue.record("mount: \(String(cString: strerror(errno)))")
            return
        }
        defer { umount2(folder.path, Int32(MNT_DETACH)) }
        try await body(folder)
    }
}
