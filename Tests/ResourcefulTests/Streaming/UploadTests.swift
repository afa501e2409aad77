import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

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
}
