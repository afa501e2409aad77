import Foundation
import HTTPTypes
import ResourcefulTesting
import Testing

@testable import Resourceful

/// A URL with userinfo is masked however many times it was percent-encoded and wherever it
/// stands (a text, a JSON string, a path segment, a fragment, a header value); a header field's
/// value is masked as a body of its form would be (a form, JSON, `name=value` pairs, a
/// credential after an authentication scheme), and what holds no secret stays readable.
@Suite struct EncodedURLAndFieldValueMaskingTests {
    static let secret = "S3CRET"
    static let redactor = Redactor(settings: APIConfig.LogSettings())
    static let once = "https%3A%2F%2Fuser%3A\(secret)%40host%2Fp"
    static let twice = "https%253A%252F%252Fuser%253A\(secret)%2540host%252Fp"

    @Test(arguments: [once, twice, "x " + once + " y", "<\(once)>", "\"\(twice)\"", "from=a to " + once])
    func anEncodedURLInATextLosesItsUserinfo(text: String) {
        let shown = Self.redactor.maskedText(text)
        #expect(!shown.contains(Self.secret), "\(shown)")
    }

    @Test(arguments: [once, twice])
    func anEncodedURLInAJSONStringLosesItsUserinfo(encoded: String) throws {
        let body = Data(#"{"note":"\#(encoded)","id":7}"#.utf8)
        let masked = try #require(Self.redactor.maskedBody(body, contentType: "application/json"))
        let text = String(decoding: masked, as: UTF8.self)
        #expect(!text.contains(Self.secret), "\(text)")
        #expect(text.contains(#""id":7"#))
    }

    @Test(arguments: [
        "https://api.example/proxy/\(once)/x",
        "https://api.example/proxy/\(twice)",
        "https://api.example/p#\(once)",
        "https://api.example/p#\(twice)",
        "https://api.example/p?\(once)",
        "https://api.example/p?\(once)=1",
        "https://api.example/p;\(once)",
        "/proxy/\(once)",
        "https%3A//user%3A\(secret)%40host/p",
        "https://api.example/p/https%3A//user%3A\(secret)%40host",
        "https://api.example/p/password%3D\(secret)",
        "https://api.example/p?q=password%3D\(secret)",
    ])
    func anEncodedURLInAPathSegmentFragmentOrQueryLosesItsUserinfo(url: String) {
        let shown = Self.redactor.maskedURL(url)
        #expect(!shown.contains(Self.secret), "\(shown)")
        #expect(shown.contains("api.example") || shown.hasPrefix("/proxy/") || shown == "***")
    }

    @Test func aRequestTargetWithAnEncodedURLSegmentIsShownWithoutIt() {
        // A path built from `"proxy/\(url)"`: the URL is one percent-encoded segment, as in a
        // cURL export, a HAR entry and a log line.
        let target = RequestTarget(parsing: "https://api.example/v1/proxy/\(Self.once)?page=2")
        let shown = Self.redactor.maskedURL(target)
        #expect(!shown.contains(Self.secret), "\(shown)")
        #expect(shown.hasPrefix("https://api.example/v1/proxy/"))
        #expect(shown.hasSuffix("?page=2"))
        let command = CURLCommand(redactor: Self.redactor).render(
            TransportRequest(method: .get, target: target, deadline: .now + .seconds(5), maxResponseBytes: 1024))
        #expect(!command.contains(Self.secret), "\(command)")
    }

    @Test func textWithPercentSignsButNothingToMaskStaysAsItIs() {
        for text in ["100%25 done", "caf%C3%A9", "50% off", "https://h/a%20b?q=x%20y", "%E2%9C%93"] {
            #expect(Self.redactor.maskedText(text) == text)
            #expect(Self.redactor.maskedURL(text) == text)
        }
    }

    /// A header value and what must not be shown of it (nil: it is shown as it is).
    struct FieldCase: CustomTestStringConvertible, Sendable {
        var value: String
        var shown: String?
        var testDescription: String { value }
    }

    static let fieldCases: [FieldCase] = [
        FieldCase(value: "password=\(secret)&x=1", shown: "password=***&x=1"),
        FieldCase(value: #"{"token":"\#(secret)","id":1}"#, shown: #"{"token":"***","id":1}"#),
        FieldCase(value: #"[{"client_secret":"\#(secret)"}]"#, shown: #"[{"client_secret":"***"}]"#),
        FieldCase(value: "a=1; session_token=\(secret); b=2", shown: "a=1; session_token=***; b=2"),
        FieldCase(value: "a=1, api_key=\(secret)", shown: "a=1, api_key=***"),
        FieldCase(value: #"theme=dark; password="\#(secret) x"; lang=en"#, shown: "theme=dark; password=***; lang=en"),
        FieldCase(value: "Bearer \(secret)", shown: "Bearer ***"),
        FieldCase(value: "bearer \(secret), other", shown: "bearer ***"),
        FieldCase(value: "Basic dXNlcjo\(secret)==", shown: "Basic ***"),
        FieldCase(value: "via proxy: Bearer \(secret)", shown: "via proxy: Bearer ***"),
        FieldCase(value: "token ghp_\(secret)", shown: "token ***"),
        FieldCase(value: "DPoP \(secret)", shown: "DPoP ***"),
        FieldCase(value: Self.once, shown: nil),
        FieldCase(value: "password%3D\(secret)", shown: nil),
        FieldCase(value: "x https%3A//user%3A\(secret)%40host y", shown: nil),
        FieldCase(value: "<https://api.example/next?access_token=\(secret)>; rel=\"next\"", shown: nil),
        FieldCase(value: #"prefix "password": "\#(secret)""#, shown: "***"),
    ]

    @Test(arguments: fieldCases)
    func aHeaderValueIsMaskedAsABodyOfItsFormWouldBe(field: FieldCase) {
        let shown = Self.redactor.headerValue(HTTPField.Name("X-Upstream")!, field.value)
        #expect(!shown.contains(Self.secret), "\(shown)")
        if let expected = field.shown { #expect(shown == expected) }
        // Log lines, HAR entries and cURL exports all show a header this way.
        let metadata = Self.redactor.headers(HTTPFields([HTTPField(name: HTTPField.Name("X-Upstream")!, value: field.value)]))
        #expect(!"\(metadata)".contains(Self.secret))
    }

    @Test(arguments: [
        "max-age=60, must-revalidate",
        "multipart/form-data; boundary=b0undary",
        "<https://api.example/items?page=2>; rel=\"next\"",
        "\"v1\"",
        "W/\"v1\"",
        "attachment; filename=\"token.txt\"",
        #"h3=":443"; ma=86400"#,
    ])
    func aHeaderValueWithoutASecretStaysReadable(value: String) {
        #expect(Self.redactor.headerValue(HTTPField.Name("X-Info")!, value) == value)
    }

    @Test func aCredentialAfterASchemeInTextIsMasked() {
        let shown = Self.redactor.maskedText("the upstream answered with Bearer \(Self.secret) attached")
        #expect(!shown.contains(Self.secret), "\(shown)")
        #expect(shown.hasPrefix("the upstream answered with Bearer "))
        #expect(Self.redactor.maskedText("The access token expired") == "The access token expired")
    }
}

/// The siblings: a multipart part's field, a log line's path and an error's path.
@Suite struct EncodedURLSiblingsTests {
    static let secret = EncodedURLAndFieldValueMaskingTests.secret
    static let redactor = EncodedURLAndFieldValueMaskingTests.redactor

    @Test(arguments: [
        "filename=\"\(EncodedURLAndFieldValueMaskingTests.once)\"",
        "filename*=UTF-8''\(EncodedURLAndFieldValueMaskingTests.once)",
        "filename=\"\(EncodedURLAndFieldValueMaskingTests.twice)\"",
    ])
    func aMultipartPartWithAnEncodedURLInAFieldIsLeftOut(parameter: String) {
        let body = "--b\r\nContent-Disposition: form-data; name=\"file\"; \(parameter)\r\n\r\nx\r\n--b--\r\n"
        #expect(Self.redactor.maskedBody(Data(body.utf8), contentType: "multipart/form-data; boundary=b") == nil)
    }

    @Test func aLogLineAndAnErrorNameThePathWithoutTheUserinfo() async throws {
        try await Harness.run(authorization: nil) { (harness: inout Harness) async throws in
            // No route: the server answers 404, naming the path in its JSON body.
            let url = "https://user:\(Self.secret)@host/p"
            let error = await #expect(throws: APIError.self) {
                try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "proxy/\(url)"))
            }
            #expect(!"\(String(describing: error))".contains(Self.secret))
            #expect(error?.path?.hasPrefix("proxy/") == true)
            #expect(harness.logText.contains("resourceful.path=/proxy/"))
            #expect(!harness.logText.contains(Self.secret), "\(harness.logText)")
        }
    }
}
