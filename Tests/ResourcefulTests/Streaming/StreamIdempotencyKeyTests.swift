import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

/// A `POST` that chose retries is one request however often its event stream reconnects or its
/// download resumes: every connection sends the same `Idempotency-Key`, its own or one made for
/// the whole sequence.
@Suite struct StreamIdempotencyKeyTests {
    private static let key = HTTPField.Name("Idempotency-Key")!

    /// A `POST` that opts in to retries without a key of its own.
    struct Completion: ResourceRequest {
        typealias ResourceType = String
        let verb = ResourceVerb.create
        let path: ResourcePath
        let parameters = ["q": "x"]
        var headers: [String: String] = [:]
        var allowsRetries: Bool { true }
    }

    /// One event, then the connection closes in the middle of the next.
    private static func brokenStream(_ number: Int) -> MockResponse {
        let text = "id: \(number)\ndata: event-\(number)\n\ndata: cut"
        var response = MockResponse(headerFields: [.contentType: "text/event-stream"], fault: .closeMidBody(bytes: text.utf8.count))
        response.parts = [Data(text.utf8)]
        return response
    }

    private static let fast = EventStreamReconnection(maxAttempts: 3, delay: .milliseconds(10), maxDelay: .milliseconds(20))

    @Test func everyReconnectionOfAnEventStreamSendsTheSameKey() async throws {
        try await Harness.run { harness in
            harness.server.stub(
                .post, "/v1/completions", Self.brokenStream(1), Self.brokenStream(2), Self.brokenStream(3), .status(.noContent))
            var received: [String] = []
            for try await event in harness.api.events(Completion(path: "completions"), reconnect: Self.fast) {
                received.append(event.data)
            }
            #expect(received == ["event-1", "event-2", "event-3"])
            let keys = harness.server.requests.map { $0.headerFields[Self.key] }
            #expect(keys.count == 4)
            #expect(keys.allSatisfy { $0 != nil && $0 == keys.first })
            #expect(harness.server.requests.dropFirst().map { $0.headerFields[HTTPField.Name("Last-Event-ID")!] } == ["1", "2", "3"])

            // A key of the request's own goes on every connection as it is.
            harness.server.stub(.post, "/v1/own", Self.brokenStream(1), .status(.noContent))
            for try await _ in harness.api.events(Completion(path: "own", headers: ["idempotency-key": "chat-7"]), reconnect: Self.fast) {}
            #expect(harness.server.requests.suffix(2).map { $0.headerFields[Self.key] } == ["chat-7", "chat-7"])
        }
    }

    @Test func everyResumptionOfADownloadSendsTheSameKey() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-key-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let content = Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let quick = APIConfig.RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(5), maxDelay: .milliseconds(20))
        try await Harness.run(configure: { $0.retry = quick }) { harness in
            let served = Locked(0)
            harness.server.route(.post, "/v1/export") { request in
                let number = served.withLock { value in
                    defer { value += 1 }
                    return value
                }
                var fields: HTTPFields = [.contentType: "application/octet-stream", .eTag: "\"v1\""]
                var start = 0
                var status = HTTPResponse.Status.ok
                if let range = request.headerFields[.range], request.headerFields[.ifRange] == "\"v1\"",
                    let first = Int(range.dropFirst(6).dropLast())
                {
                    start = first
                    status = .partialContent
                    fields[.contentRange] = "bytes \(first)-\(content.count - 1)/\(content.count)"
                }
                let body = content[start...]
                fields[.contentLength] = String(body.count)
                var response = MockResponse(status: status, headerFields: fields)
                response.parts = [Data(body)]
                if number < 2 { response.fault = .closeMidBody(bytes: 1000) }
                return response
            }
            let destination = folder.appendingPathComponent("export.bin")
            let result = try await harness.api.download(Completion(path: "export"), to: destination)
            #expect(result.connections == 3)
            #expect(try Data(contentsOf: destination) == content)
            let keys = harness.server.requests.map { $0.headerFields[Self.key] }
            #expect(keys.count == 3)
            #expect(keys.allSatisfy { $0 != nil && $0 == keys.first })
        }
    }
}
