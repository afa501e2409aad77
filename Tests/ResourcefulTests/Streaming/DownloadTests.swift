import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

/// `API.download`: bodies written to disk whole or not at all, resumed after a dropped connection.
@Suite struct DownloadTests {
    /// 1 MiB of bytes that differ from position to position, so that a misplaced range shows.
    static let content: Data = {
        var bytes = [UInt8](repeating: 0, count: 1 << 20)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        bytes.withUnsafeMutableBufferPointer { buffer in
            for index in buffer.indices {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                buffer[index] = UInt8(truncatingIfNeeded: state >> 56)
            }
        }
        return Data(bytes)
    }()

    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-download-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// Serves `content` with an ETag, honouring `Range` with a matching `If-Range`; the first
    /// `cuts` answers close after `cutAt` bytes.
    static func serve(_ server: MockServer, etag: String? = "\"v1\"", cuts: Int, cutAt: Int, honoursRange: Bool = true) {
        let served = Locked(0)
        server.route(.get, "/v1/asset") { request in
            let number = served.withLock { value in
                defer { value += 1 }
                return value
            }
            var fields: HTTPFields = [.contentType: "application/octet-stream"]
            if let etag { fields[.eTag] = etag }
            var start = 0
            var status = HTTPResponse.Status.ok
            if honoursRange, let range = request.headerFields[.range], request.headerFields[.ifRange] == etag,
                let first = Int(range.dropFirst(6).dropLast())
            {
                start = first
                status = .partialContent
                fields[.contentRange] = "bytes \(first)-\(content.count - 1)/\(content.count)"
            }
            let body = content[start...]
            fields[.contentLength] = String(body.count)
            var response = MockResponse(status: status, headerFields: fields)
            response.parts = stride(from: body.startIndex, to: body.endIndex, by: 64 * 1024).map { Data(body[$0..<min($0 + 64 * 1024, body.endIndex)]) }
            if number < cuts { response.fault = .closeMidBody(bytes: cutAt) }
            return response
        }
    }

    @Test func aWholeBodyIsWrittenAndRenamedIntoPlace() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.run { harness in
            Self.serve(harness.server, cuts: 0, cutAt: 0)
            let destination = folder.appendingPathComponent("asset.bin")
            let seen = Locked<[DownloadProgress]>([])
            let result = try await harness.api.download(AdHocRequest<Empty, Empty>(.show, "asset"), to: destination) { progress in
                seen.withLock { $0.append(progress) }
            }
            #expect(result.bytes == Self.content.count)
            #expect(result.connections == 1)
            #expect(try Data(contentsOf: destination) == Self.content)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["asset.bin"])
            let progress = seen.withLock { $0 }
            #expect(progress.last?.bytesWritten == Self.content.count)
            #expect(progress.allSatisfy { $0.totalBytes == Self.content.count })
            #expect(progress.map(\.bytesWritten) == progress.map(\.bytesWritten).sorted())
        }
    }

    @Test func aReplacedFileKeepsItsModeAndANewOneGetsTheUmasks() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.run { harness in
            Self.serve(harness.server, cuts: 0, cutAt: 0)
            let private_ = folder.appendingPathComponent("private.bin")
            try Data("old".utf8).write(to: private_)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: private_.path)
            _ = try await harness.api.download(AdHocRequest<Empty, Empty>(.show, "asset"), to: private_)
            let kept = try FileManager.default.attributesOfItem(atPath: private_.path)[.posixPermissions] as? Int
            #expect(kept == 0o600)
            let fresh = folder.appendingPathComponent("fresh.bin")
            _ = try await harness.api.download(AdHocRequest<Empty, Empty>(.show, "asset"), to: fresh)
            let mode = try FileManager.default.attributesOfItem(atPath: fresh.path)[.posixPermissions] as? Int
            let reference = folder.appendingPathComponent("reference")
            #expect(FileManager.default.createFile(atPath: reference.path, contents: Data()))
            #expect(mode == (try FileManager.default.attributesOfItem(atPath: reference.path)[.posixPermissions] as? Int))
        }
    }

    @Test func aDroppedConnectionResumesWithRangeAndIfRange() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.run { harness in
            Self.serve(harness.server, cuts: 2, cutAt: 300_000)
            let destination = folder.appendingPathComponent("asset.bin")
            let result = try await harness.api.download(AdHocRequest<Empty, Empty>(.show, "asset"), to: destination)
            #expect(result.connections == 3)
            #expect(result.status == .partialContent)
            #expect(try Data(contentsOf: destination) == Self.content)
            let ranges = harness.server.requests.map { $0.headerFields[.range] }
            #expect(ranges == [nil, "bytes=300000-", "bytes=600000-"])
            #expect(harness.server.requests.dropFirst().allSatisfy { $0.headerFields[.ifRange] == "\"v1\"" })
        }
    }

    @Test func aServerThatIgnoresRangeStartsTheFileAgain() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.run { harness in
            Self.serve(harness.server, cuts: 1, cutAt: 500_000, honoursRange: false)
            let destination = folder.appendingPathComponent("asset.bin")
            let result = try await harness.api.download(AdHocRequest<Empty, Empty>(.show, "asset"), to: destination)
            #expect(result.status == .ok)
            #expect(result.connections == 2)
            #expect(try Data(contentsOf: destination) == Self.content)
        }
    }

    @Test func withoutAValidatorADownloadStartsAgainRatherThanGuess() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.run { harness in
            Self.serve(harness.server, etag: nil, cuts: 1, cutAt: 100_000)
            let destination = folder.appendingPathComponent("asset.bin")
            _ = try await harness.api.download(AdHocRequest<Empty, Empty>(.show, "asset"), to: destination)
            #expect(harness.server.requests.allSatisfy { $0.headerFields[.range] == nil })
            #expect(try Data(contentsOf: destination) == Self.content)
        }
    }

    @Test func aBodyCutOnEveryConnectionFailsAndLeavesNothing() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.run(configure: { $0.retry.maxAttempts = 2 }) { harness in
            Self.serve(harness.server, cuts: 10, cutAt: 1000)
            let destination = folder.appendingPathComponent("asset.bin")
            let error = await #expect(throws: APIError.self) {
                _ = try await harness.api.download(AdHocRequest<Empty, Empty>(.show, "asset"), to: destination)
            }
            #expect(error?.kind == .transport)
            #expect(harness.server.requests.count == 2)
            #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty == true)
        }
    }

    @Test func a206ThatDoesNotContinueTheFileFails() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.run { harness in
            var cut = MockResponse(headerFields: [.eTag: "\"v1\"", .contentLength: "2000"], fault: .closeMidBody(bytes: 1000))
            cut.parts = [Data(repeating: 1, count: 2000)]
            let wrong = MockResponse(
                status: .partialContent,
                headerFields: [.contentRange: "bytes 0-1999/2000", .eTag: "\"v1\""],
                body: Data(repeating: 1, count: 2000)
            )
            harness.server.stub(.get, "/v1/asset", cut, wrong)
            let destination = folder.appendingPathComponent("asset.bin")
            let error = await #expect(throws: APIError.self) {
                _ = try await harness.api.download(AdHocRequest<Empty, Empty>(.show, "asset"), to: destination)
            }
            #expect(error?.kind == .transport)
            #expect(error?.detail?.contains("Content-Range") == true)
            #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty == true)
        }
    }

    @Test func a206OfAnotherVersionFails() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.run { harness in
            var cut = MockResponse(headerFields: [.eTag: "\"v1\"", .contentLength: "2000"], fault: .closeMidBody(bytes: 1000))
            cut.parts = [Data(repeating: 1, count: 2000)]
            let other = MockResponse(
                status: .partialContent,
                headerFields: [.contentRange: "bytes 1000-1999/2000", .eTag: "\"v2\""],
                body: Data(repeating: 2, count: 1000)
            )
            harness.server.stub(.get, "/v1/asset", cut, other)
            let destination = folder.appendingPathComponent("asset.bin")
            let error = await #expect(throws: APIError.self) {
                _ = try await harness.api.download(AdHocRequest<Empty, Empty>(.show, "asset"), to: destination)
            }
            #expect(error?.detail?.contains("another version") == true)
            #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty == true)
        }
    }

    @Test func aDestinationThatIsAFolderFailsBeforeAnythingIsSent() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.run { harness in
            Self.serve(harness.server, cuts: 0, cutAt: 0)
            let error = await #expect(throws: APIError.self) {
                _ = try await harness.api.download(AdHocRequest<Empty, Empty>(.show, "asset"), to: folder)
            }
            #expect(error?.kind == .file)
            #expect(harness.server.requests.isEmpty)
        }
    }

    @Test func aFolderThatCannotBeWrittenIsAFileError() async throws {
        try await Harness.run { harness in
            Self.serve(harness.server, cuts: 0, cutAt: 0)
            let destination = URL(fileURLWithPath: "/proc/resourceful-\(UUID().uuidString)/asset.bin")
            let error = await #expect(throws: APIError.self) {
                _ = try await harness.api.download(AdHocRequest<Empty, Empty>(.show, "asset"), to: destination)
            }
            #expect(error?.kind == .file)
            #expect(harness.server.requests.isEmpty)
        }
    }

    @Test func aFullDiskIsAFileErrorAndLeavesNothing() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // A 256 KiB tmpfs of its own: the 1 MiB body cannot fit.
        let mount = try await Command.run("/bin/mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", folder.path])
        try #require(mount.status == 0, "mount: \(mount.output)")
        var failure: (any Error)?
        do {
            try await fillTheDisk(folder)
        } catch {
            failure = error
        }
        _ = try await Command.run("/bin/umount", [folder.path])
        if let failure { throw failure }
    }

    private func fillTheDisk(_ folder: URL) async throws {
        try await Harness.run { harness in
            // Without a Content-Length (which would be refused at once for the space it needs),
            // the disk fills while the body is written.
            DownloadLimitTests.serve(harness.server, chunked: true)
            let destination = folder.appendingPathComponent("asset.bin")
            let error = await #expect(throws: APIError.self) {
                _ = try await harness.api.download(AdHocRequest<Empty, Empty>(.show, "asset"), to: destination)
            }
            #expect(error?.kind == .file)
            #expect(error?.detail?.contains("No space left") == true)
            #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty == true)
        }
    }

    @Test func anErrorStatusWritesNothing() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/asset", .json(raw: #"{"error":"gone"}"#, status: .notFound))
            let destination = folder.appendingPathComponent("asset.bin")
            let error = await #expect(throws: APIError.self) {
                _ = try await harness.api.download(AdHocRequest<Empty, Empty>(.show, "asset"), to: destination)
            }
            #expect(error?.status == .notFound)
            #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty == true)
        }
    }
}
