import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

#if canImport(Glibc)
import CDispatch
import CoreFoundation
import Glibc
#endif

/// `API.download` against destinations that are not regular files and servers that lie about
/// their lengths, ranges, encodings and dates.
@Suite struct DownloadSafetyTests {
    static let request = AdHocRequest<Empty, Empty>(.show, "asset")

    static func fileType(_ path: String) -> mode_t? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        return status.st_mode & S_IFMT
    }

    // MARK: Destinations

    @Test func aFIFOIsRefusedByNameBeforeAnythingIsSentAndStaysAFIFO() async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = folder.appendingPathComponent("pipe").path
        try #require(mkfifo(fifo, 0o644) == 0)
        let link = folder.appendingPathComponent("link-to-pipe").path
        try #require(symlink(fifo, link) == 0)
        try await Harness.run { harness in
            DownloadTests.serve(harness.server, cuts: 0, cutAt: 0)
            for destination in [fifo, link] {
                let error = await #expect(throws: APIError.self) {
                    _ = try await harness.api.download(Self.request, to: URL(fileURLWithPath: destination))
                }
                #expect(error?.kind == .file)
                #expect(error?.detail?.contains(destination) == true)
                #expect(error?.detail?.contains("FIFO") == true)
            }
            #expect(harness.server.requests.isEmpty)
        }
        #expect(Self.fileType(fifo) == S_IFIFO)
        #expect(Self.fileType(link) == S_IFLNK)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["link-to-pipe", "pipe"])
    }

    @Test func aDeviceIsRefusedAndLeftAlone() async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // A device of /dev/null's numbers when this may make one (root); /dev/null itself
        // otherwise, which the refusal must leave as it is.
        let made = folder.appendingPathComponent("null").path
        let device = mknod(made, S_IFCHR | 0o666, dev_t((1 << 8) | 3)) == 0 ? made : "/dev/null"
        try await Harness.run { harness in
            DownloadTests.serve(harness.server, cuts: 0, cutAt: 0)
            let error = await #expect(throws: APIError.self) {
                _ = try await harness.api.download(Self.request, to: URL(fileURLWithPath: device))
            }
            #expect(error?.kind == .file)
            #expect(error?.detail?.contains(device) == true)
            #expect(error?.detail?.contains("character device") == true)
            #expect(harness.server.requests.isEmpty)
        }
        #expect(Self.fileType(device) == S_IFCHR)
        if device == made { #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["null"]) }
    }

    @Test func aSocketIsRefused() async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("socket").path
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (index, byte) in path.utf8.prefix(bytes.count - 1).enumerated() { bytes[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0)
        try await Harness.run { harness in
            DownloadTests.serve(harness.server, cuts: 0, cutAt: 0)
            let error = await #expect(throws: APIError.self) {
                _ = try await harness.api.download(Self.request, to: URL(fileURLWithPath: path))
            }
            #expect(error?.kind == .file)
            #expect(error?.detail?.contains("socket") == true)
            #expect(harness.server.requests.isEmpty)
        }
        #expect(Self.fileType(path) == S_IFSOCK)
    }

    @Test func setIDAndStickyBitsAreNeverCarriedOver() async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.run { harness in
            DownloadTests.serve(harness.server, cuts: 0, cutAt: 0)
            for (old, new) in [(0o4755, 0o755), (0o2750, 0o750), (0o7644, 0o644)] as [(mode_t, mode_t)] {
                let program = folder.appendingPathComponent("program-\(String(old, radix: 8))").path
                try Data("#!/bin/sh\n".utf8).write(to: URL(fileURLWithPath: program))
                try #require(chmod(program, old) == 0)
                _ = try await harness.api.download(Self.request, to: URL(fileURLWithPath: program))
                var status = stat()
                try #require(stat(program, &status) == 0)
                #expect(status.st_mode & 0o7777 == new, "\(String(old, radix: 8)) became \(String(status.st_mode & 0o7777, radix: 8))")
                #expect(try Data(contentsOf: URL(fileURLWithPath: program)) == DownloadTests.content)
            }
        }
    }

    @Test func anotherUsersFileDoesNotLendItsModeToTheDownload() async throws {
        // In a folder both may write to, another user leaves a file open to everyone where this
        // user will download: the download gets a new file's mode, not that file's.
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("shared.bin").path
        try Data("planted".utf8).write(to: URL(fileURLWithPath: path))
        try #require(chmod(path, 0o666) == 0)
        try #require(chown(path, 4242, 4242) == 0, "the tests run as root, to play another user")
        try await Harness.run { harness in
            DownloadTests.serve(harness.server, cuts: 0, cutAt: 0)
            _ = try await harness.api.download(Self.request, to: URL(fileURLWithPath: path))
        }
        var status = stat()
        try #require(stat(path, &status) == 0)
        #expect(status.st_uid == geteuid())
        // The mode a new file gets here (0666 less the umask).
        let fresh = folder.appendingPathComponent("fresh").path
        let descriptor = open(fresh, O_CREAT | O_EXCL | O_WRONLY, 0o666)
        try #require(descriptor >= 0)
        close(descriptor)
        var made = stat()
        try #require(stat(fresh, &made) == 0)
        #expect(made.st_mode & 0o777 != 0o666, "the umask lets everyone write new files: nothing to tell apart")
        #expect(status.st_mode & 0o777 == made.st_mode & 0o777, "became \(String(status.st_mode & 0o777, radix: 8))")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == DownloadTests.content)
    }

    @Test func aCancelledDownloadLeavesNoTemporaryFile() async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.run { harness in
            // 200 KiB, a KiB every 50 ms: ten seconds.
            var response = MockResponse(headerFields: [.contentLength: String(200 * 1024), .eTag: "\"v1\""])
            response.parts = Array(repeating: Data(repeating: 7, count: 1024), count: 200)
            response.partDelay = .milliseconds(50)
            harness.server.stub(.get, "/v1/asset", response)
            let api = harness.api
            let destination = folder.appendingPathComponent("asset.bin")
            let download = Task { try await api.download(Self.request, to: destination) }
            // Poll until the body is arriving into the temporary file.
            let giveUp = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < giveUp, harness.server.bodyBytesSent == 0 {
                try await Task.sleep(for: .milliseconds(10))
            }
            try #require(try FileManager.default.contentsOfDirectory(atPath: folder.path).contains { $0.hasSuffix(".download") })
            download.cancel()
            let result = await download.result
            guard case .failure(let error) = result else {
                Issue.record("the download ended without error")
                return
            }
            #expect((error as? APIError)?.kind == .cancelled)
            #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty == true)
        }
    }

    // MARK: Hostile servers

    @Test func a206LongerThanItsRangeFailsAtTheFirstByteTooMany() async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let size = 4 << 20
        try await Harness.run { harness in
            // A 200 that breaks half-way, then a 206 that continues from wherever the client
            // asks and sends the rest of the file and as much again: chunked, no Content-Length
            // to stop it.
            harness.server.route(.get, "/v1/asset") { request in
                guard let range = request.headerFields[.range], let first = Int(range.dropFirst(6).dropLast()) else {
                    var cut = MockResponse(headerFields: [.eTag: "\"v1\"", .contentLength: String(size)], fault: .closeMidBody(bytes: size / 2))
                    cut.parts = (0..<4).map { _ in Data(repeating: 1, count: size / 4) }
                    return cut
                }
                var long = MockResponse(status: .partialContent, headerFields: [.contentRange: "bytes \(first)-\(size - 1)/\(size)", .eTag: "\"v1\""])
                long.parts = (0..<32).map { _ in Data(repeating: 2, count: 256 << 10) }
                return long
            }
            let seen = Locked<[DownloadProgress]>([])
            let error = await #expect(throws: APIError.self) {
                _ = try await harness.api.download(Self.request, to: folder.appendingPathComponent("big.bin")) { progress in
                    seen.withLock { $0.append(progress) }
                }
            }
            #expect(error?.kind == .transport)
            #expect(error?.detail?.contains("runs past") == true, "\(String(describing: error))")
            #expect(harness.server.requests.count == 2)
            // Nothing past the file's end was ever written.
            #expect(seen.withLock { $0 }.allSatisfy { $0.bytesWritten <= size && ($0.fractionCompleted ?? 0) <= 1 })
            #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty == true)
        }
    }

    @Test func a206WhoseContentLengthDisagreesWithItsRangeFails() async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.run { harness in
            // The 206 continues where the client asks, with 500 bytes more than its range says.
            harness.server.route(.get, "/v1/asset") { request in
                guard let range = request.headerFields[.range], let first = Int(range.dropFirst(6).dropLast()) else {
                    var cut = MockResponse(headerFields: [.eTag: "\"v1\"", .contentLength: "2000"], fault: .closeMidBody(bytes: 1000))
                    cut.parts = [Data(repeating: 1, count: 2000)]
                    return cut
                }
                return MockResponse(
                    status: .partialContent,
                    headerFields: [.contentRange: "bytes \(first)-1999/2000", .eTag: "\"v1\""],
                    body: Data(repeating: 1, count: 2000 - first + 500)
                )
            }
            let error = await #expect(throws: APIError.self) {
                _ = try await harness.api.download(Self.request, to: folder.appendingPathComponent("asset.bin"))
            }
            #expect(error?.kind == .transport)
            #expect(error?.detail?.contains("Content-Length") == true)
            #expect(harness.server.requests.count == 2)
            #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty == true)
        }
    }

    @Test(.timeLimit(.minutes(2))) func theWaitToResumeEndsAtTheDeadline() async throws {
        struct Asset: ResourceRequest {
            typealias ResourceType = Empty
            let verb = ResourceVerb.show
            let path: ResourcePath = "asset"
            static let streamTimeout = Duration.seconds(1)
            func configure(_ options: inout RequestOptions) { options.streamTimeout = Self.streamTimeout }
        }
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Waits of up to an hour between connections: the download's second may not wait one out.
        try await Harness.run(configure: { $0.retry = APIConfig.RetryPolicy(maxAttempts: 5, baseDelay: .seconds(3600), maxDelay: .seconds(3600)) }) { harness in
            DownloadTests.serve(harness.server, cuts: 10, cutAt: 1000)
            let start = ContinuousClock.now
            let error = await #expect(throws: APIError.self) {
                _ = try await harness.api.download(Asset(), to: folder.appendingPathComponent("asset.bin"))
            }
            #expect(error?.kind == .timeout)
            // The deadline and a minute for a loaded machine: a sixtieth of the longest wait.
            #expect(ContinuousClock.now - start < Asset.streamTimeout + .seconds(60))
            // One connection, two when the random wait happened to fit in the second.
            #expect(harness.server.requests.count <= 2)
            #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty == true)
        }
    }

    @Test func aCompressedBodyIsNeverResumedAtADecompressedOffset() async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let original = DownloadTests.content
        let compressed = Gzip.stored(original)
        try await Harness.run { harness in
            // A server that compresses whatever it is asked, and honours ranges of the
            // compressed bytes; its first answer breaks half-way.
            let served = Locked(0)
            harness.server.route(.get, "/v1/asset") { request in
                let number = served.withLock { value in
                    defer { value += 1 }
                    return value
                }
                var fields: HTTPFields = [.contentEncoding: "gzip", .eTag: "\"gz1\"", .contentType: "application/octet-stream"]
                var body = compressed[...]
                var status = HTTPResponse.Status.ok
                if let range = request.headerFields[.range], request.headerFields[.ifRange] == "\"gz1\"",
                    let first = Int(range.dropFirst(6).dropLast()), first < compressed.count
                {
                    body = compressed[first...]
                    status = .partialContent
                    fields[.contentRange] = "bytes \(first)-\(compressed.count - 1)/\(compressed.count)"
                }
                fields[.contentLength] = String(body.count)
                var response = MockResponse(status: status, headerFields: fields)
                response.parts = stride(from: body.startIndex, to: body.endIndex, by: 64 * 1024).map { Data(body[$0..<min($0 + 64 * 1024, body.endIndex)]) }
                if number == 0 { response.fault = .closeMidBody(bytes: compressed.count / 2) }
                return response
            }
            let destination = folder.appendingPathComponent("asset.bin")
            let result = try await harness.api.download(Self.request, to: destination)
            #expect(try Data(contentsOf: destination) == original)
            #expect(result.connections == 2)
            #expect(harness.server.requests.allSatisfy { $0.headerFields[.range] == nil })
            #expect(harness.server.requests.allSatisfy { $0.headerFields[.acceptEncoding] == "identity" })
        }
    }

    /// Serves `DownloadTests.content` with `Last-Modified` and `Date` and no `ETag`, honouring
    /// `Range` when `If-Range` names that date; the first answer breaks.
    static func serveDated(_ server: MockServer, modified: Date, date: Date) {
        let served = Locked(0)
        let lastModified = HTTPDateText.format(modified)
        server.route(.get, "/v1/asset") { request in
            let number = served.withLock { value in
                defer { value += 1 }
                return value
            }
            let content = DownloadTests.content
            var fields: HTTPFields = [.lastModified: lastModified, .date: HTTPDateText.format(date)]
            var start = 0
            var status = HTTPResponse.Status.ok
            if let range = request.headerFields[.range], request.headerFields[.ifRange] == lastModified, let first = Int(range.dropFirst(6).dropLast()) {
                start = first
                status = .partialContent
                fields[.contentRange] = "bytes \(first)-\(content.count - 1)/\(content.count)"
            }
            let body = content[start...]
            fields[.contentLength] = String(body.count)
            var response = MockResponse(status: status, headerFields: fields)
            response.parts = stride(from: body.startIndex, to: body.endIndex, by: 64 * 1024).map { Data(body[$0..<min($0 + 64 * 1024, body.endIndex)]) }
            if number == 0 { response.fault = .closeMidBody(bytes: 300_000) }
            return response
        }
    }

    @Test func a206OfAnotherDateFails() async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.run { harness in
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            // A cache that ignores If-Range and serves a part of a newer version.
            harness.server.route(.get, "/v1/asset") { request in
                guard let range = request.headerFields[.range], let first = Int(range.dropFirst(6).dropLast()) else {
                    var cut = MockResponse(
                        headerFields: [.lastModified: HTTPDateText.format(now - 86400), .date: HTTPDateText.format(now), .contentLength: "2000"],
                        fault: .closeMidBody(bytes: 1000)
                    )
                    cut.parts = [Data(repeating: 1, count: 2000)]
                    return cut
                }
                return MockResponse(
                    status: .partialContent,
                    headerFields: [.contentRange: "bytes \(first)-1999/2000", .lastModified: HTTPDateText.format(now)],
                    body: Data(repeating: 2, count: 2000 - first)
                )
            }
            let error = await #expect(throws: APIError.self) {
                _ = try await harness.api.download(Self.request, to: folder.appendingPathComponent("asset.bin"))
            }
            #expect(error?.detail?.contains("another version") == true)
            #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty == true)
        }
    }

    @Test func aLastModifiedWithinASecondOfDateIsWeakAndNotResumedOn() async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.run { harness in
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            Self.serveDated(harness.server, modified: now, date: now)
            let destination = folder.appendingPathComponent("asset.bin")
            let result = try await harness.api.download(Self.request, to: destination)
            #expect(result.status == .ok)
            #expect(harness.server.requests.allSatisfy { $0.headerFields[.range] == nil && $0.headerFields[.ifRange] == nil })
            #expect(try Data(contentsOf: destination) == DownloadTests.content)
        }
    }

    @Test func aLastModifiedWellBeforeDateIsStrongAndResumedOn() async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.run { harness in
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            Self.serveDated(harness.server, modified: now - 86400, date: now)
            let destination = folder.appendingPathComponent("asset.bin")
            let result = try await harness.api.download(Self.request, to: destination)
            #expect(result.status == .partialContent)
            #expect(harness.server.requests.map { $0.headerFields[.range] } == [nil, "bytes=300000-"])
            #expect(harness.server.requests.last?.headerFields[.ifRange] == HTTPDateText.format(now - 86400))
            #expect(try Data(contentsOf: destination) == DownloadTests.content)
        }
    }
}

/// IMF-fixdate text for the tests' `Date` and `Last-Modified` fields.
enum HTTPDateText {
    static func format(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}

/// A gzip member of stored (uncompressed) deflate blocks: what a server's `gzip` sends, made
/// without a compressor.
enum Gzip {
    static func stored(_ data: Data) -> Data {
        var out = Data([0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xFF])
        let bytes = [UInt8](data)
        var offset = 0
        repeat {
            let count = min(65535, bytes.count - offset)
            let last = offset + count == bytes.count
            out.append(last ? 1 : 0)
            out.append(contentsOf: [UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)])
            out.append(contentsOf: bytes[offset..<offset + count])
            offset += count
        } while offset < bytes.count
        for value in [crc32(bytes), UInt32(truncatingIfNeeded: bytes.count)] {
            out.append(contentsOf: [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF), UInt8((value >> 16) & 0xFF), UInt8(value >> 24)])
        }
        return out
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        let table: [UInt32] = (0..<256).map { index in
            var value = UInt32(index)
            for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
            return value
        }
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
