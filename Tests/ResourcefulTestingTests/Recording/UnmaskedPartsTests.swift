import Foundation
import HTTPTypes
import NIOCore
import Resourceful
import ResourcefulTesting
import Testing

/// What a recording and a cURL export must never keep: secrets in the URLs of `Location`, `Link`
/// and `Refresh`, bodies that cannot be masked, and bodies a request redacts.
@Suite struct UnmaskedPartsTests {
    static let signature = "sig-AMZ-77c1"
    static let linkKey = "link-KEY-3b9"
    static let xmlSecret = "xml-SECRET-5d2"
    static let textSecret = "text-SECRET-6e4"
    static let loginPassword = "login-PASS-8f1"

    struct Login: Encodable, Sendable {
        var username = "ada"
        var pass = UnmaskedPartsTests.loginPassword
    }

    struct LogIn: ResourceRequest {
        typealias ResourceType = Empty
        let verb = ResourceVerb.create
        let path: ResourcePath = "sessions"
        let parameters = Login()
        // `pass` is masked by name now, but a redacted body must not be kept even when it is not.
        var shouldRedactRequestBody: Bool { true }
        var shouldRedactResponseBody: Bool { true }
    }

    struct Empty204: ResourceRequest {
        typealias ResourceType = Empty
        let verb = ResourceVerb.show
        let path: ResourcePath
    }

    @Test func urlsInResponseHeadersAndUnmaskableBodiesNeverReachTheFile() async throws {
        let file = try CassetteFixture.scratchFile()
        try await MockServer.withRunning { server in
            let next = "\(server.baseURL.absoluteString)/v1/next?X-Amz-Signature=\(Self.signature)&access_token=\(CassetteFixture.accessToken)"
            server.stub(
                .get, "/v1/moved",
                MockResponse(
                    status: .noContent,
                    headerFields: [
                        .location: next,
                        HTTPField.Name("Link")!: "<\(server.baseURL.absoluteString)/v1/page?api_key=\(Self.linkKey)&page=2>; rel=\"next\"",
                        HTTPField.Name("Refresh")!: "0; url=\(next)",
                    ]
                )
            )
            server.stub(.get, "/v1/xml", MockResponse(status: .ok, headerFields: [.contentType: "application/xml"], body: Data("<a><secret>\(Self.xmlSecret)</secret></a>".utf8)))
            server.stub(.get, "/v1/text", MockResponse(status: .ok, headerFields: [.contentType: "text/plain"], body: Data("password=\(Self.textSecret)".utf8)))
            server.stub(.get, "/v1/untyped", MockResponse(status: .ok, body: Data("token \(Self.textSecret)".utf8)))
            server.stub(.post, "/v1/sessions", MockResponse(status: .ok, headerFields: [.contentType: "application/json"], body: Data(#"{"note":"\#(Self.loginPassword)"}"#.utf8)))
            try await AsyncHTTPClientTransport.withTransport { live in
                let recorder = try RecordingTransport(live, file: file)
                let api = CassetteFixture.api(server.baseURL.appendingPathComponent("v1"), recorder)
                _ = try await api.call(Empty204(path: "moved"))
                for path in ["xml", "text", "untyped"] {
                    _ = try? await api.call(AdHocRequest<Empty, Empty>(.show, ResourcePath(encoded: path)))
                }
                _ = try await api.call(LogIn())
            }
        }
        let text = try String(contentsOf: file, encoding: .utf8)
        for secret in [Self.signature, CassetteFixture.accessToken, Self.linkKey, Self.xmlSecret, Self.textSecret, Self.loginPassword] {
            #expect(!text.contains(secret), "the HAR file holds \(secret)")
        }
        #expect(text.contains("page=2"))
        #expect(text.contains("left out: it cannot be masked"))
        #expect(text.contains("left out: the request redacts it"))
        #expect(try CassetteFixture.secretsIn(file) == [])
    }
}
