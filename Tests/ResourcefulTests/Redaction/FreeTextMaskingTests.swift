import Foundation
import HTTPTypes
import NIOCore
import Testing

@testable import Resourceful

/// After a masked name, masking reads an allow-list: only what plainly ends the name without a
/// value (the end, `&`, a closing bracket, `, ` and the like) leaves the text readable; any other
/// separator, escaped JSON, a scheme-relative URL's userinfo anywhere, and a name or separator
/// percent-encoded several times are masked in header values, free text, JSON strings, log lines
/// and cURL exports. Prose that merely names a secret stays readable in text.
@Suite struct FreeTextMaskingTests {
    static let secret = "Q7SEKRIT"
    static let redactor = Redactor(settings: APIConfig.LogSettings())
    static let upstream = HTTPField.Name("X-Upstream")!

    /// Inputs that gave a masked name a value and were shown, each holding ``secret``.
    static let leaking: [String] = [
        // Separators outside the old deny-list.
        "password|\(secret)", "password,\(secret)", "password;\(secret)", "password/\(secret)", "password->\(secret)",
        "password=>\(secret)", "password\u{FF1D}\(secret)", "password\u{200B}=\(secret)", "pass\u{200B}word=\(secret)",
        "password\u{2060}:\(secret)", "password&#61;\(secret)", "password&#x3d;\(secret)", "password&equals;\(secret)",
        #"password\u003d\#(secret)"#, "password\\=\(secret)", "api_key|\(secret)", "note: token#\(secret)",
        "a=1 password@\(secret)", "\u{FF50}\u{FF41}\u{FF53}\u{FF53}\u{FF57}\u{FF4F}\u{FF52}\u{FF44}=\(secret)",
        // Escaped JSON.
        #"data={\"password\":\"\#(secret)\"}"#, #"{\"password\":\"\#(secret)\"}"#, #"x {\"token\" : \"\#(secret)\"}"#,
        #"[\"client_secret\",\"\#(secret)\"]"#, #"{\"\u0070assword\":\"\#(secret)\"}"#, "&#112;assword=\(secret)",
        "&quot;password&quot;:&quot;\(secret)&quot;", #"p\x61ssword=\#(secret)"#,
        // A name given a value after a sign, or as an element with attributes.
        "note: password: \(secret)", "user=a, pass: \(secret)", "<password type=\"text\">\(secret)</password>",
        // Userinfo of a scheme-relative URL anywhere.
        "see //user:\(secret)@host/x", "url=//user:\(secret)@host", "(//user:\(secret)@host)", "\"//u:\(secret)@h\"",
        "a b //u:\(secret)@h/p?q=1", #"see \/\/u:\#(secret)@h\/x"#, #"see \\u:\#(secret)@h"#,
        // Encoded several times.
        "password%2525253D\(secret)", "%2570assword=\(secret)", "%252570assword%25253D\(secret)", "pass%2577ord=\(secret)",
        "password%252525253D\(secret)",
    ]

    /// Inputs a header field's value (not a challenge) masks too: a word or a sign after a name.
    static let leakingInAFieldValue: [String] = [
        "password !\(secret)", "password #\(secret)", "password $\(secret)", "password (\(secret))", "password - \(secret)",
        "password \"\(secret)\"",
    ]

    @Test(arguments: leaking + leakingInAFieldValue)
    func aHeaderValueNeverShowsTheSecret(value: String) {
        let shown = Self.redactor.headerValue(Self.upstream, value)
        #expect(!shown.contains(Self.secret), "\(shown)")
        let metadata = Self.redactor.headers(HTTPFields([HTTPField(name: Self.upstream, value: value)]))
        #expect(!"\(metadata)".contains(Self.secret))
    }

    @Test(arguments: leaking)
    func aTextNeverShowsTheSecret(text: String) {
        let shown = Self.redactor.maskedText(text)
        #expect(!shown.contains(Self.secret), "\(shown)")
    }

    @Test(arguments: leaking)
    func aJSONStringNeverShowsTheSecret(text: String) throws {
        let encoded = try JSONEncoder().encode(["note": text, "id": "7"])
        let masked = try #require(Self.redactor.maskedBody(encoded, contentType: "application/json"))
        let shown = String(decoding: masked, as: UTF8.self)
        #expect(!shown.contains(Self.secret), "\(shown)")
        #expect(shown.contains(#""id":"7""#))
    }

    @Test func aCURLExportAndAChallengeNeverShowTheSecret() {
        var fields = HTTPFields()
        fields[HTTPField.Name("X-Data")!] = #"data={\"password\":\"\#(Self.secret)\"}"#
        fields[HTTPField.Name("X-Next")!] = "see //user:\(Self.secret)@host/x"
        fields[HTTPField.Name("X-Note")!] = "password|\(Self.secret)"
        var request = TransportRequest(
            method: .get, target: RequestTarget(parsing: "https://api.example/v1/items"), deadline: .now + .seconds(5),
            maxResponseBytes: 1024)
        request.headerFields = fields
        let command = CURLCommand(redactor: Self.redactor).render(request)
        #expect(!command.contains(Self.secret), "\(command)")
        #expect(command.contains("X-Data: ***"))
        let challenge = Self.redactor.headerValue(.wwwAuthenticate, #"Bearer realm="api", error_description="password|\#(Self.secret)""#)
        #expect(!challenge.contains(Self.secret), "\(challenge)")
    }

    @Test func userinfoIsMaskedWhereverAURLStandsAndTheRestStays() {
        #expect(Self.redactor.maskedText("see //user:\(Self.secret)@host/x now") == "see //***@host/x now")
        #expect(Redactor.withoutUserinfo("a //u:\(Self.secret)@h/p") == "a //***@h/p")
        #expect(!Self.redactor.maskedURL("https://api.example/p?next=//u:\(Self.secret)@h").contains(Self.secret))
    }

    /// What names a secret but gives it no value stays readable: in text, prose; in a header
    /// field's value, lists of names and what plainly ends a name.
    @Test(arguments: [
        "The access token expired", "password reset required", "Invalid password, try again.", "Forgot your password?",
        "the \"password\" field is required", "invalid token: expired", "the password's length", "token (optional)",
        "Missing header: X-Api-Key", "see https://api.example/auth/login", "https://api.example/reset-password?lang=en",
        "/v1/tokens/", "password=***&a=1", "Bearer ***", "remaining tokens: 3", "urn:ietf:params:oauth:token-type:access_token",
        "a=1&password&b=2", "user[password]", "password) or", "100%25 done",
    ])
    func proseStaysReadableInText(text: String) {
        #expect(Self.redactor.maskedText(text) == text)
    }

    @Test(arguments: [
        "Authorization, X-Api-Key, Content-Type", "no-cache=\"Set-Cookie\"", "<https://api.example/auth/login>; rel=\"login\"",
        "https://api.example/reset-password?lang=en", "attachment; filename=\"token.txt\"", "Cookie",
        "password; charset=utf-8", "auth;dur=53.2, db;dur=47",
    ])
    func aHeaderValueThatGivesNoValueStaysReadable(value: String) {
        #expect(Self.redactor.headerValue(HTTPField.Name("X-Info")!, value) == value)
    }

    @Test func aListOfFieldNamesStaysReadableAndNothingElseHides() {
        let allow = HTTPField.Name("Access-Control-Allow-Headers")!
        #expect(Self.redactor.headerValue(allow, "authorization,x-api-key,content-type") == "authorization,x-api-key,content-type")
        #expect(Self.redactor.headerValue(.vary, "Cookie,Accept-Encoding") == "Cookie,Accept-Encoding")
        #expect(!Self.redactor.headerValue(.vary, "password|\(Self.secret)").contains(Self.secret))
        #expect(!Self.redactor.headerValue(allow, "password=\(Self.secret)").contains(Self.secret))
    }

    @Test func aFieldValueThatReadsAsANameAndAWordIsMaskedWhole() {
        // A header field's value is not prose: a word after a masked name may be its value.
        #expect(Self.redactor.headerValue(Self.upstream, "password reset required") == "***")
    }

    @Test func aNameEncodedMoreTimesThanTheBoundIsMasked() {
        // Six encodings of `p`: past the bound, nothing says what the name is.
        #expect(Self.redactor.isMasked(formName: "%252525252570assword"))
        #expect(Self.redactor.query("%2570assword=\(Self.secret)&a=1") == "%2570assword=***&a=1")
        #expect(!Self.redactor.isMasked(formName: "page"))
        #expect(!Self.redactor.isMasked(formName: "100%25"))
    }
}
