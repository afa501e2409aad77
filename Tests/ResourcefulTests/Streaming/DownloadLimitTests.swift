import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `API.download` within a size cap and the destination's free space, and never resuming on a
/// validator that names more than one version.
@Suite struct DownloadLimitTests {
    static let request = AdHocRequest<Empty, Empty>(.show, "asset")

    /// Serves `DownloadTests.content` in 64 KiB parts, with `Content-Length` unless `chunked`.
    static func serve(_ server: MockServer, chunked: Bool = false) {
        var fields: HTTPFields = [.contentType: "application/octet-stream"]
        if !chunked { fields[.contentLength] = String(DownloadTests.content.count) }
        var response = MockResponse(headerFields: fields)
        let body = DownloadTests.content
        response.parts = stride(from: 0, to: body.count, by: 64 * 1024).map { Data(body[$0..<min($0 + 64 * 1024, body.count)]) }
        server.stub(.get, "/v1/asset", response)
    }

    // MARK: The cap

    @Test func aContentLengthOverTheCapIsRefusedBeforeAByteIsWritten() async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.run { harness in
            Self.serve(harness.server)
            let error = await #expect(throws: APIError.self) {
                _ = try await harness.api.download(
                    Self.request, to: folder.appendingPathComponent("asset.bin"), options: DownloadOptions(maxBytes: 1000)
                )
            }
            #expect(error?.kind == .responseTooLarge)
            #expect(error?.detail?.contains("1000") == true, "\(String(describing: error))")
            #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty == true)
        }
    }

    @Test func aBodyWithoutALengthFailsAtTheFirstBytePastTheCapAndLeavesNothing() async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.run { harness in
            Self.serve(harness.server, chunked: true)
            let written = Locked(0)
            let error = await #expect(throws: APIError.self) {
                _ = try await harness.api.download(
                    Self.request, to: folder.appendingPathComponent("asset.bin"), options: DownloadOptions(maxBytes: 200_000)
                ) { progress in
                    written.withLock { $0 = max($0, progress.bytesWritten) }
                }
            }
            #expect(error?.kind == .responseTooLarge)
            #expect(written.withLock { $0 } <= 200_000)
            #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty == true)
        }
    }

    @Test func aBodyOfExactlyTheCapIsWritten() async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.run { harness in
            for chunked in [false, true] {
                Self.serve(harness.server, chunked: chunked)
                let destination = folder.appendingPathComponent("asset-\(chunked).bin")
                let result = try await harness.api.download(
                    Self.request, to: destination, options: DownloadOptions(maxBytes: DownloadTests.content.count)
                )
                #expect(result.bytes == DownloadTests.content.count)
                #expect(try Data(contentsOf: destination) == DownloadTests.content)
            }
        }
    }

    @Test func aNegativeCapIsRefusedBeforeAnythingIsSent() async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.run { harness in
            Self.serve(harness.server)
            let error = await #expect(throws: APIError.self) {
                _ = try await harness.api.download(Self.request, to: folder.appendingPathComponent("asset.bin"), options: DownloadOptions(maxBytes: -1))
            }
            #expect(error?.kind == .invalidRequest)
            #expect(harness.server.requests.isEmpty)
            #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty == true)
        }
    }

    // MARK: Free space

    @Test func aContentLengthOverTheFreeSpaceIsRefusedAtOnce() async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // A 256 KiB tmpfs of its own: the 1 MiB body cannot fit.
        let mount = try await Command.run("/bin/mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", folder.path])
        try #require(mount.status == 0, "mount: \(mount.output)")
        var failure: (any Error)?
        do {
            try await Harness.run { harness in
                Self.serve(harness.server)
                let written = Locked(0)
                let error = await #expect(throws: APIError.self) {
                    _ = try await harness.api.download(Self.request, to: folder.appendingPathComponent("asset.bin")) { progress in
                        written.withLock { $0 = max($0, progress.bytesWritten) }
                    }
                }
                #expect(error?.kind == .file)
                #expect(error?.detail?.contains("do not fit") == true, "\(String(describing: error))")
                #expect(written.withLock { $0 } == 0)
                #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty == true)
            }
        } catch {
            failure = error
        }
        _ = try await Command.run("/bin/umount", [folder.path])
        if let failure { throw failure }
    }

    // MARK: Validators that name more than one version

    /// A server that sends `tags` as `ETag` fields, cuts its first answer, and answers any `Range`
    /// with a `206` carrying the same fields (as one that ignores `If-Range` would).
    static func serveWithTags(_ server: MockServer, _ tags: [String]) {
        let served = Locked(0)
        server.route(.get, "/v1/asset") { request in
            let number = served.withLock { value in
                defer { value += 1 }
                return value
            }
            var fields: HTTPFields = [.contentType: "application/octet-stream"]
            for tag in tags { fields.append(HTTPField(name: .eTag, value: tag)) }
            var start = 0
            var status = HTTPResponse.Status.ok
            if let range = request.headerFields[.range], let first = Int(range.dropFirst(6).dropLast()) {
                start = first
                status = .partialContent
                fields[.contentRange] = "bytes \(first)-\(DownloadTests.content.count - 1)/\(DownloadTests.content.count)"
            }
            let body = DownloadTests.content[start...]
            fields[.contentLength] = String(body.count)
            var response = MockResponse(status: status, headerFields: fields)
            response.parts = stride(from: body.startIndex, to: body.endIndex, by: 64 * 1024).map { Data(body[$0..<min($0 + 64 * 1024, body.endIndex)]) }
            if number == 0 { response.fault = .closeMidBody(bytes: 300_000) }
            return response
        }
    }

    @Test(arguments: [[#""a""#, #""b""#], [#""a", "b""#], [#""a""#, #""a""#]])
    func anETagRepeatedOrListedGivesNoValidatorAndTheDownloadStartsAgain(tags: [String]) async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.run { harness in
            Self.serveWithTags(harness.server, tags)
            let destination = folder.appendingPathComponent("asset.bin")
            let result = try await harness.api.download(Self.request, to: destination)
            #expect(result.connections == 2)
            #expect(result.status == .ok)
            #expect(harness.server.requests.allSatisfy { $0.headerFields[.range] == nil && $0.headerFields[.ifRange] == nil })
            #expect(try Data(contentsOf: destination) == DownloadTests.content)
        }
    }
}
