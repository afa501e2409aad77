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

    /// What an outside review's server sent: URLs in any header (`Refresh` without `url=`, a
    /// `Link` anchor, a custom URL header, a special scheme without slashes), secret names and
    /// URLs with userinfo in JSON, a multipart part of JSON and one of a form. None of its secrets
    /// reaches the file.
    @Test func secretsInHeaderURLsJSONNamesAndPartsNeverReachTheFile() async throws {
        let file = try CassetteFixture.scratchFile()
        let names = #"{"SecretString":"S-A1","pw":"S-A2","creds":"S-A3","token_value":"S-A4","otp_code":"S-A5","privateKeyPem":"S-A6","key_material":"S-A7","connection_string":"S-A8","DATABASE_URL":"postgres://app:S-A9@db/prod","REDIS_URL":"redis://:S-A10@r:6379","SECRET_KEY_BASE":"S-A11","p":"\ufeff{\"password\":\"S-A12\"}","f":"password=S-A13&a=1","private_key_id":"kid-1"}"#
        let multipart =
            "--XyZ\r\nContent-Disposition: form-data; name=\"metadata\"\r\nContent-Type: application/json\r\n\r\n{\"client_secret\":\"S-B1\"}\r\n"
            + "--XyZ\r\nContent-Disposition: form-data; name=\"form\"\r\nContent-Type: application/x-www-form-urlencoded\r\n\r\npassword=S-B2\r\n"
            + "--XyZ\r\nContent-Disposition: form-data; name*0=\"pass\"; name*1=\"word\"\r\n\r\nS-B3\r\n--XyZ--\r\n"
        try await MockServer.withRunning { server in
            server.stub(
                .get, "/v1/headers",
                MockResponse(
                    status: .ok,
                    headerFields: [
                        .contentType: "application/json", HTTPField.Name("Refresh")!: "0; https://user:S-C1@evil.example/?access_token=S-C2",
                        HTTPField.Name("Link")!: #"<https://a.example/next>; rel="next"; anchor="https://user:S-C3@evil.example/?token=S-C4""#,
                        HTTPField.Name("X-Callback-Url")!: "https://user:S-C5@evil.example/?access_token=S-C6",
                        .contentLocation: "https:user:S-C7@evil.example/x;jsessionid=S-C8?next=https%3A%2F%2Fu%3AS-C9%40h%2F",
                    ],
                    body: Data(names.utf8)
                )
            )
            server.stub(
                .get, "/v1/multipart",
                MockResponse(status: .ok, headerFields: [.contentType: "multipart/form-data; boundary=XyZ"], body: Data(multipart.utf8))
            )
            try await AsyncHTTPClientTransport.withTransport { live in
                let recorder = try RecordingTransport(live, file: file)
                for path in ["headers", "multipart"] {
                    let request = TransportRequest(
                        method: .get, url: server.baseURL.absoluteString + "/v1/" + path, deadline: .now + .seconds(60),
                        maxResponseBytes: 1 << 20
                    )
                    _ = try await recorder.send(request)
                }
            }
        }
        let text = try String(contentsOf: file, encoding: .utf8)
        for secret in ["S-A", "S-B", "S-C"] { #expect(!text.contains(secret), "the HAR file holds \(secret)") }
        // What is not secret stays readable, and the multipart body is kept, masked.
        #expect(text.contains("kid-1"))
        #expect(text.contains("postgres://***@db/prod"))
        #expect(text.contains("name=\\\"form\\\""))
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
                        method: .get, url: server.baseURL.absoluteString + "/v1/" + path, deadline: .now + .seconds(60),
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
