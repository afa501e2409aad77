import Foundation
import HTTPTypes
import NIOCore
import Resourceful
import ResourcefulTesting
import Testing

/// A recording never keeps a body it cannot mask with certainty: a multipart body without its
/// closing delimiter, one cut at the streamed recording's limit, a form body that is JSON; and
/// URLs lose their userinfo and authorization codes.
@Suite struct FailClosedRecordingTests {
    static let secret = "S3CR3T-VALUE"

    @Test func aStreamedMultipartBodyCutAtTheLimitIsLeftOut() async throws {
        let file = try CassetteFixture.scratchFile()
        // A part named `client_secret` first, then more than the recording keeps, in lines.
        var body = "--b0undary\r\nContent-Disposition: form-data; name=\"client_secret\"\r\n\r\n\(Self.secret)\r\n"
        body += "--b0undary\r\nContent-Disposition: form-data; name=\"log\"\r\n\r\n"
        body += String(repeating: String(repeating: "x", count: 1023) + "\n", count: 1100)
        body += "\r\n--b0undary--\r\n"
        try await MockServer.withRunning { server in
            server.stub(
                .get, "/v1/export",
                MockResponse(status: .ok, headerFields: [.contentType: "multipart/form-data; boundary=b0undary"], body: Data(body.utf8))
            )
            try await AsyncHTTPClientTransport.withTransport { live in
                let recorder = try RecordingTransport(live, file: file)
                var request = TransportRequest(
                    method: .get, url: server.baseURL.absoluteString + "/v1/export", deadline: .now + .seconds(20),
                    maxResponseBytes: 8 << 20
                )
                request.streamsResponseBody = true
                let response = try await recorder.send(request)
                var received = 0
                for try await chunk in response.body { received += chunk.readableBytes }
                #expect(received == body.utf8.count)
            }
        }
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(!text.contains(Self.secret))
        #expect(text.contains("left out: only its first bytes were kept"))
    }

    @Test func aRequestMatchesItsMaskedRecordingWithSemicolonsAndJSONInItsQuery() async throws {
        let file = try CassetteFixture.scratchFile()
        let url = "http://127.0.0.1:9/search?user=a;password=S40&filter=%7B%22token%22%3A%22S41%22%7D&page=2"
        let request = TransportRequest(method: .get, url: url, deadline: .now + .seconds(5), maxResponseBytes: 1 << 20)
        let network = StubTransport { _ in
            TransportResponse(status: .ok, headerFields: [.contentType: "application/json"], body: ByteBuffer(string: "1"))
        }
        _ = try await RecordingTransport(network, file: file).send(request)
        let text = try String(contentsOf: file, encoding: .utf8)
        for secret in ["S40", "S41"] { #expect(!text.contains(secret)) }
        let replayed = try await ReplayingTransport(file: file).send(request)
        #expect(String(buffer: replayed.body.bytes ?? ByteBuffer()) == "1")
    }

    /// Asking to keep bodies the rules cannot mask keeps none of a type they mask.
    @Test(arguments: [false, true])
    func bodiesThatCannotBeMaskedAndUserinfoNeverReachTheFile(keepingOthers: Bool) async throws {
        let file = try CassetteFixture.scratchFile()
        try await MockServer.withRunning { server in
            server.stub(
                .get, "/v1/unclosed",
                MockResponse(
                    status: .ok, headerFields: [.contentType: "multipart/form-data; boundary=b0undary"],
                    body: Data("--b0undary\r\nContent-Disposition: form-data; NAME=password\r\n\r\n\(Self.secret)\r\n".utf8)
                )
            )
            server.stub(
                .get, "/v1/form",
                MockResponse(
                    status: .ok, headerFields: [.contentType: "application/x-www-form-urlencoded"],
                    body: Data(#"{"password": "\#(Self.secret)"}"#.utf8)
                )
            )
            server.stub(
                .get, "/v1/semicolons",
                MockResponse(
                    status: .ok, headerFields: [.contentType: "application/x-www-form-urlencoded"],
                    body: Data("user=a;password=\(Self.secret)".utf8))
            )
            server.stub(
                .get, "/v1/moved",
                MockResponse(status: .noContent, headerFields: [.location: "https://user:S27@evil.example/cb?code=S27b&state=x"])
            )
            try await AsyncHTTPClientTransport.withTransport { live in
                let recorder = try RecordingTransport(live, file: file, keepingBodiesThatCannotBeMasked: keepingOthers)
                for path in ["unclosed", "form", "semicolons", "moved"] {
                    let request = TransportRequest(
                        method: .get, url: server.baseURL.absoluteString + "/v1/" + path, deadline: .now + .seconds(10),
                        maxResponseBytes: 1 << 20
                    )
                    _ = try await recorder.send(request)
                }
            }
        }
        let text = try String(contentsOf: file, encoding: .utf8)
        for secret in [Self.secret, "S27"] { #expect(!text.contains(secret), "the HAR file holds \(secret)") }
        #expect(text.contains("user=a;password=***"))
        #expect(text.contains("https://***@evil.example/cb?code=***&state=x"))
        #expect(text.contains("left out: it cannot be masked"))
    }
}
