import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Request bodies read from files as they are sent (`FileUpload`, `MultipartFile(contentsOf:)`).
@Suite struct UploadTests {
    struct Receipt: Codable, Sendable { var ok: Bool }

    struct PutBackup: ResourceRequest {
        typealias ResourceType = Receipt
        let verb = ResourceVerb.update
        let path: ResourcePath = "backups/1"
        let file: URL
        var parameters: FileUpload { FileUpload(file, contentType: "application/zstd") }
    }

    struct Form: Encodable, Sendable {
        var title: String
        var attachment: MultipartFile
    }

    static func file(_ bytes: Int) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-upload-\(UUID().uuidString)")
        try Data((0..<bytes).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: url)
        return url
    }

    @Test func aFileIsSentWithItsLengthAndTypeAndSentAgainByARetry() async throws {
        let url = try Self.file(300_000)
        defer { try? FileManager.default.removeItem(at: url) }
        try await Harness.run { harness in
            harness.server.stub(.put, "/v1/backups/1", .status(.serviceUnavailable), .json(raw: #"{"ok":true}"#))
            let receipt = try await harness.api.call(PutBackup(file: url))
            #expect(receipt.ok)
            let sent = harness.server.requests
            try #require(sent.count == 2)
            let original = try Data(contentsOf: url)
            for request in sent {
                #expect(request.body == original)
                #expect(request.headerFields[.contentLength] == "300000")
                #expect(request.headerFields[.contentType] == "application/zstd")
            }
        }
    }

    @Test func anUploadOutsideABodyFailsRatherThanSendItsPath() async throws {
        let url = try Self.file(10)
        defer { try? FileManager.default.removeItem(at: url) }
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/backups", .json(raw: "[]"))
            let error = await #expect(throws: APIError.self) {
                _ = try await harness.api.call(AdHocRequest<[Int], FileUpload>(.index, "backups", parameters: FileUpload(url)))
            }
            #expect(error?.kind == .invalidRequest || error?.kind == .encodingFailed)
            #expect(harness.server.requests.isEmpty)
        }
    }

    @Test func aMissingFileFailsBeforeAnythingIsSent() async throws {
        try await Harness.run { harness in
            harness.server.stub(.put, "/v1/backups/1", .json(raw: #"{"ok":true}"#))
            let missing = URL(fileURLWithPath: "/nonexistent/resourceful-\(UUID().uuidString)")
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(PutBackup(file: missing)) }
            #expect(error?.kind == .file)
            #expect(error?.detail?.contains(missing.path) == true)
            #expect(harness.server.requests.isEmpty)
        }
    }

    @Test func aMultipartPartFromDiskMatchesThePartFromMemory() async throws {
        let url = try Self.file(200_000)
        defer { try? FileManager.default.removeItem(at: url) }
        let bytes = try Data(contentsOf: url)
        try await Harness.run { harness in
            harness.server.route(.post, "/v1/attachments") { _ in .json(raw: #"{"ok":true}"#, status: .created) }
            func upload(_ file: MultipartFile) -> AdHocRequest<Receipt, Form> {
                var request = AdHocRequest<Receipt, Form>(.create, "attachments", parameters: Form(title: "report", attachment: file))
                request.bodyEncoding = .multipart
                return request
            }
            _ = try await harness.api.call(upload(MultipartFile(contentsOf: url, filename: "r.bin")))
            _ = try await harness.api.call(upload(MultipartFile(filename: "r.bin", data: bytes)))
            let sent = harness.server.requests
            try #require(sent.count == 2)
            // The same parts, each body under its own boundary.
            func normalised(_ request: RecordedRequest) throws -> Data {
                let type = try #require(request.headerFields[.contentType])
                let boundary = try #require(type.split(separator: "=").last)
                let text = String(decoding: request.body, as: UTF8.self)
                return Data(text.replacingOccurrences(of: String(boundary), with: "B").utf8)
            }
            #expect(try normalised(sent[0]) == normalised(sent[1]))
            #expect(sent[0].headerFields[.contentLength] == String(sent[0].body.count))
            #expect(sent[0].body.range(of: bytes) != nil)
        }
    }

    /// A route that answers 503 to the first request, after another file of the same size took
    /// `url`'s name, and `ok` to the next.
    static func swapThenRetry(_ server: MockServer, _ method: HTTPRequest.Method, _ path: String, file url: URL, size: Int) {
        let calls = Locked(0)
        server.route(method, path) { _ in
            let number = calls.withLock { value in
                defer { value += 1 }
                return value
            }
            guard number == 0 else { return .json(raw: #"{"ok":true}"#) }
            let other = url.appendingPathExtension("other")
            try Data(repeating: 0x41, count: size).write(to: other)
            guard rename(other.path, url.path) == 0 else { throw CocoaError(.fileWriteUnknown) }
            return .status(.serviceUnavailable)
        }
    }

    @Test func aRetrySendsTheFileItOpenedNotOneSwappedInSince() async throws {
        let url = try Self.file(200_000)
        defer { try? FileManager.default.removeItem(at: url) }
        let original = try Data(contentsOf: url)
        try await Harness.run { harness in
            Self.swapThenRetry(harness.server, .put, "/v1/backups/1", file: url, size: 200_000)
            let receipt = try await harness.api.call(PutBackup(file: url))
            #expect(receipt.ok)
            let sent = harness.server.requests
            try #require(sent.count == 2)
            #expect(sent.allSatisfy { $0.body == original })
        }
    }

    @Test func aRetryOfAMultipartBodySendsTheFileItOpened() async throws {
        let url = try Self.file(200_000)
        defer { try? FileManager.default.removeItem(at: url) }
        let original = try Data(contentsOf: url)
        try await Harness.run { harness in
            Self.swapThenRetry(harness.server, .put, "/v1/attachments/1", file: url, size: 200_000)
            var request = AdHocRequest<Receipt, Form>(.update, "attachments/1", parameters: Form(title: "report", attachment: MultipartFile(contentsOf: url)))
            request.bodyEncoding = .multipart
            _ = try await harness.api.call(request)
            let sent = harness.server.requests
            try #require(sent.count == 2)
            #expect(sent.allSatisfy { $0.body.range(of: original) != nil })
        }
    }

    @Test func aFIFOOrDeviceIsRefusedBeforeAnythingIsSent() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-upload-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = folder.appendingPathComponent("pipe")
        try #require(mkfifo(fifo.path, 0o600) == 0)
        try await Harness.run { harness in
            harness.server.stub(.put, "/v1/backups/1", .json(raw: #"{"ok":true}"#))
            for path in [fifo, URL(fileURLWithPath: "/dev/zero")] {
                let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(PutBackup(file: path)) }
                #expect(error?.kind == .file)
                #expect(error?.detail?.contains("not a regular file") == true)
            }
            #expect(harness.server.requests.isEmpty)
        }
    }
}
