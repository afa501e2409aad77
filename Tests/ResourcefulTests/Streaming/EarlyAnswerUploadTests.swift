import Foundation
import HTTPTypes
import NIOCore
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

/// Uploads that nginx answers before it has read their bodies: a body over `client_max_body_size`
/// is refused with `413` from its length alone, and a location that only returns a status answers
/// at once. The call ends with the server's answer, never with a transport failure or a time-out,
/// whichever of the answer's end and the body's end the client sees first.
@Suite struct EarlyAnswerUploadTests {
    struct Receipt: Codable, Sendable { var ok: Bool }

    struct PutBackup: ResourceRequest {
        typealias ResourceType = Receipt
        let verb = ResourceVerb.update
        let path: ResourcePath
        let file: URL
        var parameters: FileUpload { FileUpload(file, contentType: "application/octet-stream") }
    }

    /// A streamed body `length` bytes long, read once.
    struct PutStream: ResourceRequest {
        typealias ResourceType = Receipt
        let verb = ResourceVerb.update
        let path: ResourcePath
        let length: Int
        var parameters: Empty { Empty() }
    }

    static func withNginx(_ body: (URL) async throws -> Void) async throws {
        let nginx = try await Nginx.start(
            server: """
                location /v1/limited/ { client_max_body_size 1k; }
                location /v1/refused/ { client_max_body_size 0; return 401; }
                """
        )
        do {
            try await body(URL(string: "http://127.0.0.1:\(nginx.port)/v1")!)
        } catch {
            try await nginx.stop()
            throw error
        }
        try await nginx.stop()
    }

    static func file(_ bytes: Int) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-early-\(UUID().uuidString)")
        try Data(repeating: 0x5a, count: bytes).write(to: url)
        return url
    }

    @Test(arguments: [("limited/backup", 413), ("refused/backup", 401)])
    func aFileUploadAnsweredBeforeItsBodyEndsGetsTheAnswer(path: String, status: Int) async throws {
        let url = try Self.file(4 << 20)
        defer { try? FileManager.default.removeItem(at: url) }
        try await Self.withNginx { base in
            let transport = AsyncHTTPClientTransport()
            var config = APIConfig(baseURL: base, service: "uploads", timeout: .seconds(60))
            config.retry.maxAttempts = 1
            let api = API(dependencies: APIDependencies(apiConfig: config, transport: transport))
            // The client may see the answer's end before or after the body's end: each way, often.
            for _ in 0..<20 {
                let error = await #expect(throws: APIError.self) { try await api.call(PutBackup(path: "\(path)", file: url)) }
                #expect(error?.status?.code == status, "\(error.map { String(describing: $0) } ?? "no error")")
            }
            try await api.shutdown()
        }
    }

    /// Streams `length` bytes in parts of 64 KiB, as an app's own step would.
    struct StreamTheBody: APIMiddleware {
        let length: Int

        func intercept(
            _ request: TransportRequest, context: CallContext,
            next: (TransportRequest, CallContext) async throws -> TransportResponse
        ) async throws -> TransportResponse {
            var request = request
            let length = self.length
            let parts = AsyncStream<ByteBuffer> { continuation in
                var left = length
                while left > 0 {
                    let part = min(left, 64 << 10)
                    continuation.yield(ByteBuffer(repeating: 0x5a, count: part))
                    left -= part
                }
                continuation.finish()
            }
            request.body = TransportBody(stream: parts, length: length)
            request.headerFields[.contentLength] = String(length)
            return try await next(request, context)
        }
    }

    @Test func aStreamedBodyAnsweredBeforeItEndsGetsTheAnswer() async throws {
        try await Self.withNginx { base in
            var config = APIConfig(baseURL: base, service: "uploads", timeout: .seconds(60))
            config.retry.maxAttempts = 1
            let api = API(
                dependencies: APIDependencies(apiConfig: config, transport: AsyncHTTPClientTransport()),
                middlewares: [StreamTheBody(length: 4 << 20)] + API.defaultMiddlewares
            )
            for path in ["limited/stream", "refused/stream"] {
                for _ in 0..<10 {
                    let error = await #expect(throws: APIError.self) { try await api.call(PutStream(path: "\(path)", length: 4 << 20)) }
                    #expect(error?.status?.code == (path.hasPrefix("limited") ? 413 : 401), "\(error.map { String(describing: $0) } ?? "no error")")
                }
            }
            try await api.shutdown()
        }
    }
}
