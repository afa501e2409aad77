import Foundation
import HTTPTypes
import Testing

@testable import Resourceful

/// Where a masked value ends, and what counts as no value: a masked name's value runs to the
/// separator that starts the next pair or to the end (a quote, `)`, `>` or space in a secret
/// hides the rest too); `:=`, `==`, `= =`, `: <` after a masked name give it a value; userinfo
/// hidden behind an escaped `@` or `//` is masked; a URL's fragment of `?a=1#` pieces is kept as
/// it is, however long.
@Suite struct MaskedValueExtentTests {
    static let redactor = Redactor(settings: APIConfig.LogSettings())
    static let data = HTTPField.Name("X-Data")!

    static func shown(_ value: String) -> String {
        redactor.headerValue(data, value)
    }

    /// A request carrying `value` in `X-Data`, as a cURL export shows it.
    static func curl(_ value: String, url: String = "https://api.example/v1/items") -> String {
        var request = TransportRequest(method: .get, target: RequestTarget(parsing: url), deadline: .now + .seconds(5), maxResponseBytes: 1024)
        request.headerFields[data] = value
        return CURLCommand(redactor: redactor).render(request)
    }

    @Test(arguments: [
        (#"user=bob; password=p@ss)w0rd"S-F13"#, "user=bob; password=***"),
        ("password=abc'S-F14", "password=***"),
        (#"password=abc"S-F15"#, "password=***"),
        ("password=abc>S-F16", "password=***"),
        ("password=abc)S-F17", "password=***"),
        ("password=correct S-F18 battery", "password=***"),
        (#"password="a b"S-F19"#, "password=***"),
        ("a=1; token=abc)S-F20; Path=/", "a=1; token=***; Path=/"),
        ("a=1, token=abc S-F21, b=2", "a=1, token=***, b=2"),
    ])
    func aMaskedValueRunsToTheNextPairOrTheEnd(value: String, expected: String) {
        #expect(Self.shown(value) == expected)
        let command = Self.curl(value)
        #expect(!command.contains("S-F"), "\(command)")
        let metadata = Self.redactor.headers(HTTPFields([HTTPField(name: Self.data, value: value)]))
        #expect(!"\(metadata)".contains("S-F"))
    }

    @Test(arguments: [
        "password:=S-E2", "password := S-E2", "password = = S-E2", "password: <S-E2>", #"password=="S-E2""#,
        "password=;S-E2", "password=,S-E2", "x password:=S-E2 y",
    ])
    func aSeparatorAfterAnAssignmentIsAValue(value: String) throws {
        #expect(!Self.shown(value).contains("S-E2"), "\(Self.shown(value))")
        #expect(!Self.redactor.maskedText(value).contains("S-E2"))
        let encoded = try JSONEncoder().encode(["note": value])
        let body = String(decoding: try #require(Self.redactor.maskedBody(encoded, contentType: "application/json")), as: UTF8.self)
        #expect(!body.contains("S-E2"), "\(body)")
    }

    @Test func aSeparatorAfterAnAssignmentIsAValueInQueriesRedirectsAndJSONKeys() throws {
        let url = "https://api.example/v1/items?note=password%3A%3DS-Q5&a=1"
        #expect(!Self.redactor.maskedURL(RequestTarget(parsing: url)).contains("S-Q5"))
        #expect(!Self.curl("x", url: url).contains("S-Q5"))
        #expect(!Self.redactor.maskedURL("https://h.example/next?note=password%3A%3DS-Q6").contains("S-Q6"))
        #expect(!Self.redactor.maskedURL("https://h.example/next?note=password:=S-Q8&a=1").contains("S-Q8"))
        #expect(!Self.redactor.headerValue(.location, "https://h.example/next?note=password: <S-Q9>").contains("S-Q9"))
        #expect(Self.redactor.maskedURL("https://h.example/next?scope=read:token&q=reset+password") == "https://h.example/next?scope=read:token&q=reset+password")
        #expect(!Self.redactor.headerValue(.location, "https://h.example/next?note=password%20%3D%20%3DS-Q7").contains("S-Q7"))
        let key = Data(#"{"password: <S-K6>":1,"id":"7"}"#.utf8)
        let shownKey = String(decoding: try #require(Self.redactor.maskedBody(key, contentType: "application/json")), as: UTF8.self)
        #expect(!shownKey.contains("S-K6"), "\(shownKey)")
        let value = Data(#"{"note":"password: <S-B3>","id":"7"}"#.utf8)
        let shownValue = String(decoding: try #require(Self.redactor.maskedBody(value, contentType: "application/json")), as: UTF8.self)
        #expect(!shownValue.contains("S-B3"), "\(shownValue)")
        #expect(shownValue.contains(#""id":"7""#))
    }

    /// An element with a namespace prefix (`<wsse:Password>`, as WS-Security and SAML write
    /// them) is masked as `<password>` is, in bodies, header fields and query values.
    @Test func aNamespacedElementIsMaskedAsAPlainOneIs() throws {
        let body = Data(#"{"soap":"<wsse:Password>S-X1</wsse:Password>","id":"7"}"#.utf8)
        let shown = String(decoding: try #require(Self.redactor.maskedBody(body, contentType: "application/json")), as: UTF8.self)
        #expect(!shown.contains("S-X1"), "\(shown)")
        #expect(!Self.shown("<ns:token>S-X2</ns:token>").contains("S-X2"))
        #expect(!Self.shown("<a:b:password >S-X3</a:b:password>").contains("S-X3"))
        #expect(!Self.shown("<ns\u{B7}1:password>S-X5</ns\u{B7}1:password>").contains("S-X5"))
        #expect(!Self.shown("<\u{E9}:password>S-X6</\u{E9}:password>").contains("S-X6"))
        #expect(!Self.redactor.maskedURL("https://h.example/next?x=<wsse:Password>S-X4</wsse:Password>").contains("S-X4"))
        // A prefix alone is no element: `x:password>` is an arrow's shape, not a tag.
        #expect(Self.shown("<ns:name>Ada</ns:name>") == "<ns:name>Ada</ns:name>")
    }

    /// A masked query or form value runs to the next pair or the end: a reader that splits at
    /// `&` alone takes `;…` as part of the password, and one that splits at `;` alone `&…`.
    @Test func aMaskedQueryValueRunsToTheNextPair() throws {
        #expect(Self.redactor.maskedURL("https://h.example/ok?password=Xy7;S-Q10") == "https://h.example/ok?password=***")
        #expect(Self.redactor.maskedURL("https://h.example/ok?password=Xy7&S-Q11&a=1") == "https://h.example/ok?password=***&a=1")
        // Cut at `;` or `?`, a value still runs to the next `&` pair: a reader that splits at
        // `&` alone reads `Xy7;x=…` whole as the password.
        #expect(Self.redactor.maskedURL("https://h.example/ok?password=Xy7;x=S-Q14&a=1") == "https://h.example/ok?password=***&a=1")
        #expect(Self.redactor.maskedURL("https://h.example/ok?password=Xy7?S-Q15") == "https://h.example/ok?password=***")
        #expect(Self.redactor.maskedURL("https://h.example/ok?a=1;b=2;c=v") == "https://h.example/ok?a=1;b=2;c=v")
        let form = try #require(Self.redactor.maskedForm(Data("user=a&password=Xy7;S-Q12".utf8)))
        #expect(String(decoding: form, as: UTF8.self) == "user=a&password=***")
        #expect(!Self.redactor.headerValue(.location, "/v1/s/ok?password=Xy7;S-Q13").contains("S-Q13"))
    }

    /// A query value that gives a secret's name a value with no encoded character in it
    /// (`password|…`, `<password>…`, `password->…`) is masked in a URL, as it is in text.
    @Test(arguments: [
        ("n0=password|S-R1", "S-R1"), ("n1=<password>S-R2</password>", "S-R2"), ("n2=password->S-R3", "S-R3"), ("n3=password,S-R4", "S-R4"),
    ])
    func anUnencodedValueGivingASecretAValueIsMasked(_ query: String, secret: String) {
        #expect(!Self.redactor.maskedURL("https://h.example/v1/s/ok?\(query)&a=1").contains(secret), "\(query)")
    }

    /// What ends a name without a value stays readable.
    @Test(arguments: [
        "password=&a=1", "password=; a=1", "a=1&password=&b=2", "password=***; a=1", "<password></password>",
        #"{"password":"","b":1}"#, #"{"a":{"password":""}}"#, "dGhlVG9rZW4==", "password=***&a=1",
    ])
    func noValueStaysReadable(value: String) {
        // A form (`password=&a=1` in a text) masks every masked name's value, even an empty one.
        #expect(Self.redactor.maskedText(value) == Self.redactor.query(value) || Self.redactor.maskedText(value) == value)
        #expect(Self.redactor.maskedText(value) != Redactor.mask)
        // A header field's value that starts like JSON is masked as JSON.
        if !value.hasPrefix("{") { #expect(Self.shown(value) == value) }
    }

    /// A list of names or scopes is not a name and its value.
    @Test func aListOfNamesOrScopesStaysReadable() {
        #expect(Self.redactor.headerValue(.cacheControl, #"no-cache="Set-Cookie,Authorization", private"#) == #"no-cache="Set-Cookie,Authorization", private"#)
        #expect(Self.shown("read:token,write:token") == "read:token,write:token")
        #expect(Self.shown("token, password") == "token, password")
        #expect(Self.shown("read:token,S-N1") == "***")
        #expect(Self.shown("Set-Cookie,S-N2") == "***")
        #expect(Self.shown("password,S-N3,token") == "***")
    }

    /// The quoted strings of `Server-Timing` and `Warning` are prose; what they give a value, and
    /// the rest of the field, are masked as in any field.
    @Test func quotedProseOfServerTimingAndWarningStaysReadable() {
        let timing = HTTPField.Name("Server-Timing")!
        let warning = HTTPField.Name("Warning")!
        #expect(Self.redactor.headerValue(timing, #"auth;desc="Auth check";dur=12"#) == #"auth;desc="Auth check";dur=12"#)
        #expect(Self.redactor.headerValue(warning, #"299 - "password expires soon""#) == #"299 - "password expires soon""#)
        #expect(!Self.redactor.headerValue(timing, #"auth;desc="password=S-P1""#).contains("S-P1"))
        #expect(Self.redactor.headerValue(timing, #"auth;desc="password: S-P2""#) == "***")
        #expect(Self.redactor.headerValue(timing, #"password S-P3;desc="x""#) == "***")
        #expect(Self.redactor.headerValue(warning, #"299 - "password S-P4"#) == "***")
        #expect(Self.redactor.headerValue(warning, #"299 - "Bearer S-P5""#) == #"299 - "Bearer ***"#)
    }

    @Test(arguments: [
        "http://u:S-W1&#64;h/", "http://u:S-W1&#x40;h/", "http://u:S-W1&commat;h/", #"http://u:S-W1\x40h/"#,
        #"http://u:S-W1\u0040h/"#, "http:&#47;&#47;u:S-W1@h/", "see http://u:S-W1%26%2364%3Bh/",
    ])
    func userinfoBehindAnEscapedSignIsMasked(value: String) throws {
        #expect(!Self.shown(value).contains("S-W1"), "\(Self.shown(value))")
        #expect(!Self.redactor.maskedText(value).contains("S-W1"))
        #expect(!Self.redactor.maskedURL(value).contains("S-W1"))
        #expect(!Self.redactor.headerValue(.location, value).contains("S-W1"))
        let body = Data(#"{"html":"<a href=\"\#(value.replacingOccurrences(of: "\\", with: "\\\\"))\">","id":"7"}"#.utf8)
        let shownBody = String(decoding: try #require(Self.redactor.maskedBody(body, contentType: "application/json")), as: UTF8.self)
        #expect(!shownBody.contains("S-W1"), "\(shownBody)")
    }

    @Test func aFragmentOfQueriesIsKeptAsItIsAndItsSecretsMasked() throws {
        let url = "https://h.example/?a=1#?b=2#?c=3#?d=4#?e=5#?f=6"
        #expect(Self.redactor.maskedURL(url) == url)
        let document = try JSONEncoder().encode(["u": url])
        #expect(Self.redactor.maskedBody(document, contentType: "application/json") == document)
        #expect(Self.redactor.maskedURL("https://h.example/?a=1#?b=2#?token=S-G1#?c=3") == "https://h.example/?a=1#?b=2#?token=***#?c=3")
        #expect(Self.redactor.maskedURL("https://h.example/?a=1?token=S-G2&b=2") == "https://h.example/?a=1?token=***&b=2")
    }

    /// Masking reads each character a bounded number of times: a long input comes back whole
    /// (nothing replaced past a depth), and a secret in it is masked however far it stands.
    @Test func longInputsAreKeptWholeAndMasked() throws {
        let long = String(repeating: "?a=1#", count: 20_000)
        let document = try JSONEncoder().encode(["u": long])
        let shown = try #require(Self.redactor.maskedBody(document, contentType: "application/json"))
        #expect(shown.count == document.count)
        let withSecret = long + "?token=S-L1"
        #expect(Self.redactor.maskedURL(withSecret) == long + "?token=***")
        let parameters = "a=1; password=" + String(repeating: ")x", count: 50_000) + "S-L2"
        #expect(Self.shown(parameters) == "a=1; password=***")
        let pairs = String(repeating: "password=; ", count: 20_000) + "a=1"
        #expect(Self.shown(pairs) == pairs)
    }

    /// A service's masked lists add to the top level's.
    @Test func aServicesMaskedNamesAddToTheTopLevels() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-masked-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(
            #"""
            {"baseURL": "https://api.example.com/v1", "service": "s", "baseHeaders": ["X-Cust-Cred: S-C1"],
             "logging": {"maskedHeaders": ["X-Cust-Cred"], "maskedBodyKeys": ["custKey"]},
             "http": {"redirects": {"sensitiveHeaders": ["X-Cust-Cred"]}},
             "services": {"svc": {"logging": {"maskedHeaders": ["X-Svc-Cred"], "maskedBodyKeys": ["svcKey"]},
                                  "http": {"redirects": {"sensitiveHeaders": ["X-Svc-Cred"]}}}}}
            """#.utf8
        ).write(to: directory.appendingPathComponent("prod.json"))
        let config = try await APIConfig.load(environment: "prod", configDirectory: directory.path, environmentVariables: [:], service: "svc")
        #expect(Set(config.logging.maskedHeaders) == ["X-Svc-Cred", "X-Cust-Cred"])
        #expect(Set(config.logging.maskedBodyKeys) == ["svcKey", "custKey"])
        #expect(Set(config.http.sensitiveRedirectHeaders) == ["X-Svc-Cred", "X-Cust-Cred"])
        let redactor = Redactor(settings: config.logging)
        #expect(redactor.headerValue(HTTPField.Name("X-Cust-Cred")!, "S-C1") == "***")
        let top = try await APIConfig.load(environment: "prod", configDirectory: directory.path, environmentVariables: [:])
        #expect(top.logging.maskedHeaders == ["X-Cust-Cred"])
    }
}
