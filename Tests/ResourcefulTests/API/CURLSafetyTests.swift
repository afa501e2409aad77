import Foundation
import HTTPTypes
import NIOCore
import ResourcefulTesting
import Testing

@testable import Resourceful

/// A cURL export, a log line or an error shows no URL's userinfo and no authorization code, and
/// nothing in a cURL command is read by curl as a file or a pattern.
@Suite struct CURLSafetyTests {
    static let redactor = Redactor(settings: APIConfig.LogSettings())

    static func render(_ request: TransportRequest) -> String {
        CURLCommand(redactor: redactor).render(request)
    }

    @Test(arguments: [
        ("https://user:S26@h.example/a", "https://***@h.example/a"),
        ("https://user:S26@h.example", "https://***@h.example"),
        ("https://user@h.example?x=1", "https://***@h.example?x=1"),
        ("//user:S26@h.example/a", "//***@h.example/a"),
        ("https://a:b@c:S26@h.example/a@b", "https://***@h.example/a@b"),
        ("https://user:S27@evil.example/cb?code=S27b&state=x", "https://***@evil.example/cb?code=***&state=x"),
        ("https://h.example/cb#access_token=S28&token_type=bearer", "https://h.example/cb#access_token=***&token_type=bearer"),
        ("/relative/path?page=2", "/relative/path?page=2"),
        ("mailto:someone@example.com", "mailto:someone@example.com"),
        ("'https://u:S33@h.example/'", "'https://***@h.example/'"),
        ("/login?next=https://u:S34@h.example/x", "/login?next=https://***@h.example/x"),
        ("https://h.example/a@b", "https://h.example/a@b"),
    ])
    func urlsLoseTheirUserinfo(url: String, shown: String) {
        #expect(Self.redactor.maskedURL(url) == shown)
    }

    @Test func theRequestURLAndLocationLoseTheirUserinfo() {
        let request = TransportRequest(
            method: .get, url: "https://user:S26@api.example.com/v1/things?code=S26c",
            headerFields: [.contentLocation: "https://user:S27@evil.example/cb?code=S27b"],
            deadline: .now + .seconds(5), maxResponseBytes: 1024
        )
        let exported = Self.render(request)
        for secret in ["S26", "S27"] { #expect(!exported.contains(secret), "\(exported)") }
        #expect(exported.contains("https://***@api.example.com/v1/things?code=***"))
        #expect(Self.redactor.headerValue(.location, "https://u:S29@evil.example/x?code=S29b") == "https://***@evil.example/x?code=***")
        #expect(Self.redactor.headerValue(HTTPField.Name("Refresh")!, "0; url=https://u:S30@e.example/") == "0; url=https://***@e.example/")
    }

    @Test func aBodyStartingWithAnAtSignIsNotAFileName() {
        let request = TransportRequest(
            method: .post, url: "https://api.example.com/v1/things",
            headerFields: [.contentType: "application/x-www-form-urlencoded"],
            body: ByteBuffer(string: "@/etc/passwd"), deadline: .now + .seconds(5), maxResponseBytes: 1024
        )
        // Not a form's name: left out, never given to curl as a file name.
        let exported = Self.render(request)
        #expect(!exported.contains("'@/etc/passwd'"), "\(exported)")
        #expect(exported.contains("left out: it cannot be masked"))
        // A body that can be shown is given with --data-raw, which reads no file.
        var form = request
        form.body = TransportBody(ByteBuffer(string: "name=@/etc/passwd&password=S32"))
        let shown = Self.render(form)
        #expect(shown.contains("--data-raw 'name=@/etc/passwd&password=***'"), "\(shown)")
        #expect(!shown.contains("--data-binary '"))
    }

    @Test func aURLWithBracketsIsNotAPattern() {
        let request = TransportRequest(
            method: .get, url: "https://api.example.com/v1/things?filter[name]=a&ids=[1,2]&q=a{b}",
            deadline: .now + .seconds(5), maxResponseBytes: 1024
        )
        #expect(Self.render(request).contains("curl --globoff 'https://api.example.com/v1/things?filter[name]=a&ids=[1,2]&q=a{b}'"))
        let plain = TransportRequest(
            method: .get, url: "https://api.example.com/v1/things", deadline: .now + .seconds(5), maxResponseBytes: 1024)
        #expect(!Self.render(plain).contains("--globoff"))
    }

    @Test func aMethodIsQuotedWhenItIsNotAPlainWord() throws {
        let method = try #require(HTTPRequest.Method("X|sh"))
        let request = TransportRequest(
            method: method, url: "https://api.example.com/v1/x", deadline: .now + .seconds(5), maxResponseBytes: 1024)
        #expect(Self.render(request).contains("--request 'X|sh'"))
    }

    @Test func logLinesShowNoUserinfoOrCodeOfALocation() async throws {
        try await Harness.run { harness in
            var response = MockResponse.status(.noContent)
            response.headerFields[.location] = "https://user:S31@evil.example/cb?code=S31b&state=x"
            harness.server.stub(.get, "/v1/moved", response)
            _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "moved"))
            #expect(!harness.logText.contains("S31"))
            #expect(harness.logText.contains("https://***@evil.example/cb?code=***&state=x"))
        }
    }
}
