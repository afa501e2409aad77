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
        // Special schemes are read as WHATWG parsers read them: any slashes or backslashes, or none.
        ("https:user:S35@127.0.0.1/x", "https:***@127.0.0.1/x"),
        (#"https:\\u:S35@h.example/"#, #"https:\\***@h.example/"#),
        ("HTTPS:///u:S35@h.example/", "HTTPS:///***@h.example/"),
        ("postgres://app:S35@db/prod", "postgres://***@db/prod"),
        // URLs inside query values, once decoded; path parameters.
        ("/login?next=https%3A%2F%2Fu%3AS36%40h.example%2F", "/login?next=https%3A%2F%2F%2A%2A%2A%40h.example%2F"),
        ("/login?next=%2F%2Fu%3AS36%40h.example%2F&a=1", "/login?next=%2F%2F%2A%2A%2A%40h.example%2F&a=1"),
        ("/login?next=https%3A%2F%2Fh.example%2F%3Faccess_token%3DS36", "/login?next=https%3A%2F%2Fh.example%2F%3Faccess_token%3D%2A%2A%2A"),
        ("ht\ttps:/\t/u:S35@h.example/", "https://***@h.example/"),
        ("https:x http://u:S35@h.example/", "https:x http://***@h.example/"),
        ("/login?next=https%253A%252F%252Fu%253AS36%2540h.example%252F&a=1", "/login?next=***&a=1"),
        ("https://h.example/cart;jsessionid=S37?x=1", "https://h.example/cart;jsessionid=***?x=1"),
        ("https://h.example/a;jsessionid=S37/b;v=1", "https://h.example/a;jsessionid=***/b;v=1"),
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

    /// What a hostile server can nest (URLs in query values in URLs, schemes without hosts, names
    /// with colons) is masked in a few passes, not one per level.
    @Test func hostileNestingIsMaskedInAFewPasses() throws {
        let budget = Duration.seconds(10)
        let started = ContinuousClock.now
        let nested = Self.redactor.maskedURL("/x?" + String(repeating: "a=?", count: 30_000) + "token=S44")
        #expect(!nested.contains("S44"))
        let schemes = Redactor.withoutUserinfo(String(repeating: "http:x", count: 50_000) + "@h")
        #expect(schemes.hasSuffix("***@h"))
        let json = #"{"a":""# + String(repeating: "a: ", count: 50_000) + #""}"#
        _ = try #require(Self.redactor.maskedBody(Data(json.utf8), contentType: "application/json"))
        #expect(ContinuousClock.now - started < budget)
    }

    /// Every URL a header value is or holds, whatever the header and wherever in the value.
    @Test(arguments: [
        ("Refresh", "0; https://user:S38@evil.example/?access_token=S38b", "0; https://***@evil.example/?access_token=***"),
        ("Refresh", "0;url = https://user:S38@evil.example/?access_token=S38b", "0;url = https://***@evil.example/?access_token=***"),
        ("Refresh", "0; URL='https://user:S38@evil.example/?access_token=S38b'", "0; URL='https://***@evil.example/?access_token=***'"),
        (
            "Link", #"<https://a.example/next?token=S39b>; rel="next"; anchor="https://user:S39@evil.example/?token=S39b""#,
            #"<https://a.example/next?token=***>; rel="next"; anchor="https://***@evil.example/?token=***""#
        ),
        ("Referer", "https://u:S40@h.example/page?session=S40b", "https://***@h.example/page?session=***"),
        ("Origin", "https://u:S40@h.example", "https://***@h.example"),
        ("X-Callback-Url", "https://user:S41@evil.example/?access_token=S41b", "https://***@evil.example/?access_token=***"),
        ("Content-Location", "https:user:S41@evil.example/?x=1", "https:***@evil.example/?x=1"),
        ("Content-Type", "text/html; charset=utf-8", "text/html; charset=utf-8"),
        ("X-Pw", "S42", "***"),
    ])
    func headerValuesLoseTheSecretsOfTheirURLs(name: String, value: String, shown: String) throws {
        let field = try #require(HTTPField.Name(name))
        #expect(Self.redactor.headerValue(field, value) == shown)
        let request = TransportRequest(
            method: .get, url: "https://api.example.com/v1/x", headerFields: [field: value], deadline: .now + .seconds(5),
            maxResponseBytes: 1024
        )
        let exported = Self.render(request)
        for secret in ["S38", "S39", "S40", "S41", "S42"] { #expect(!exported.contains(secret), "\(exported)") }
    }

    /// What masking hides in a URL (a path parameter, a URL in a query value) still tells two
    /// callers' cached answers apart.
    @Test func urlsThatDifferOnlyInWhatIsMaskedHaveTheirOwnCacheKeys() {
        let pairs = [
            ("https://h.example/cart;jsessionid=S43a", "https://h.example/cart;jsessionid=S43b"),
            ("https://h.example/x?next=https%3A%2F%2Fu%3AS43a%40h%2F", "https://h.example/x?next=https%3A%2F%2Fu%3AS43b%40h%2F"),
        ]
        for (first, second) in pairs {
            let one = CacheKey(target: RequestTarget(parsing: first), headerFields: [:], redactor: Self.redactor)
            let other = CacheKey(target: RequestTarget(parsing: second), headerFields: [:], redactor: Self.redactor)
            #expect(one.storageKey != other.storageKey)
            #expect(!one.storageKey.contains("S43"))
        }
        let plain = CacheKey(target: RequestTarget(parsing: "https://h.example/x?page=2"), headerFields: [:], redactor: Self.redactor)
        #expect(!plain.isCredentialed)
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
