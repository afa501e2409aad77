import Foundation
import HTTPTypes
import ResourcefulTesting
import Testing

@testable import Resourceful

/// A header field's value is masked whole when what it hides cannot be located with certainty
/// (JSON that does not parse, a masked name given a value in a form no rule masks pair by pair,
/// encoded once or more); everything after an authentication scheme's name is masked in a field
/// that is not a challenge; credential headers are masked by name.
@Suite struct HeaderValueFailClosedTests {
    static let redactor = Redactor(settings: APIConfig.LogSettings())
    static let upstream = HTTPField.Name("X-Upstream")!

    static func shown(_ value: String, in name: HTTPField.Name = upstream) -> String {
        redactor.headerValue(name, value)
    }

    @Test(arguments: [
        "{password: S-HV1}", #"{"a":1, password: "S-HV1"}"#, "[password, S-HV1", "- password: S-HV1",
        "<password>S-HV1</password>", "user=a, pass:S-HV1", "password%253DS-HV1", "password%25253DS-HV1",
        "note: api_key: S-HV1", "x; X-Api-Key: S-HV1", "secrets: S-HV1", "client_secret S-HV1", "the password is S-HV1",
        "api_key%2520S-HV1", "password+S-HV1",
    ])
    func aValueWhoseSecretCannotBeLocatedIsMaskedWhole(value: String) {
        #expect(Self.shown(value) == "***")
        // Log lines, HAR entries and cURL exports all show a header this way.
        let metadata = Self.redactor.headers(HTTPFields([HTTPField(name: Self.upstream, value: value)]))
        #expect(!"\(metadata)".contains("S-HV1"))
    }

    @Test(arguments: [
        ("SSWS S-HV2", "SSWS ***"),
        (#"Digest username="u", response="S-HV2", nonce="n""#, "Digest ***"),
        ("upstream token S-HV2", "upstream token ***"),
        ("Bearer abc=S-HV2", "Bearer ***"),
        ("Bearer *S-HV2", "Bearer ***"),
        ("Bearer\u{00A0}S-HV2", "Bearer\u{00A0}***"),
        ("Bearer\u{2003}S-HV2", "Bearer\u{2003}***"),
        ("Bearer:S-HV2", "Bearer:***"),
        (#"Bearer "S-HV2""#, "Bearer ***"),
        ("Bearer S-HV2;x", "Bearer ***"),
        ("AWS4-HMAC-SHA256 Credential=AKID/x, SignedHeaders=host, Signature=S-HV2", "AWS4-HMAC-SHA256 ***"),
        (#"OAuth oauth_consumer_key="k", oauth_token="S-HV2", oauth_signature="S-HV2""#, "OAuth ***"),
        ("via proxy: Bearer S-HV2", "via proxy: Bearer ***"),
        ("The access token S-HV2", "The access token ***"),
    ])
    func everythingAfterASchemeIsMasked(value: String, expected: String) {
        #expect(Self.shown(value) == expected)
    }

    @Test func aCredentialAfterASchemeInABodyIsMaskedToo() throws {
        let body = Data(#"{"a":"SSWS S-HVB1","b":"Bearer\u00a0S-HVB2","c":"Bearer *S-HVB3","d":"Bearer\u2003S-HVB4","e":"ok"}"#.utf8)
        let masked = String(decoding: try #require(Self.redactor.maskedBody(body, contentType: "application/json")), as: UTF8.self)
        #expect(!masked.contains("S-HVB"), "\(masked)")
        #expect(masked.contains(#""e":"ok""#))
        #expect(Self.redactor.maskedText("Bearer ***") == "Bearer ***")
    }

    @Test func aChallengeKeepsItsParametersReadable() {
        let challenge = #"Bearer realm="api", error="invalid_token", error_description="The access token expired""#
        #expect(Self.shown(challenge, in: .wwwAuthenticate) == challenge)
        #expect(Self.shown(challenge, in: .proxyAuthenticate) == challenge)
        let withToken = Self.shown(#"Bearer realm="x", error="invalid_token", access_token="S-WWW""#, in: .wwwAuthenticate)
        #expect(!withToken.contains("S-WWW") && withToken.contains(#"realm="x""#), "\(withToken)")
        let digest = Self.shown(#"Digest realm="r", response="S-DR", cnonce="S-DC", nonce="n""#, in: .wwwAuthenticate)
        #expect(!digest.contains("S-DR") && !digest.contains("S-DC") && digest.contains(#"realm="r""#), "\(digest)")
    }

    @Test(arguments: [
        "max-age=60, must-revalidate", "attachment; filename=\"token.txt\"", "<https://api.example/items?page=2>; rel=\"next\"",
        "Sat, 28 Nov 2026 01:48:49 GMT", "Authorization, X-Api-Key, Content-Type", #"h3=":443"; ma=86400"#, "100%25 done",
        "[1,2]",
    ])
    func aValueWithoutASecretStaysReadable(value: String) {
        #expect(Self.shown(value, in: HTTPField.Name("X-Info")!) == value)
    }

    @Test(arguments: [
        "DPoP", "X-Vault-Token", "X-Auth-Token", "X-Goog-Api-Key", "Ocp-Apim-Subscription-Key", "X-JFrog-Art-Api",
        "X-Consul-Token", "X-Hasura-Admin-Secret", "CF-Access-Client-Secret", "X-Amz-Security-Token", "PRIVATE-TOKEN",
        "X-Shopify-Access-Token", "X-RapidAPI-Key", "X-Hub-Signature-256", "Circle-Token",
    ])
    func aCredentialHeaderIsMaskedAndDroppedBeforeAnotherOrigin(name: String) {
        #expect(SensitiveNames.isSensitiveHeader(name))
        #expect(Self.shown("eyJS-HV5.x.y", in: HTTPField.Name(name)!) == "***")
    }

    @Test func aLogLineAndAHARFileMaskTheseValues() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("fieldvalue-\(UUID().uuidString).har")
        defer { try? FileManager.default.removeItem(at: file) }
        try await Harness.run { harness in
            var answer = MockResponse.json(raw: #"{"id":7}"#)
            answer.headerFields[HTTPField.Name("X-Debug")!] = "- password: S-HVLOG1"
            answer.headerFields[HTTPField.Name("X-Upstream")!] = "SSWS S-HVLOG2"
            answer.headerFields[HTTPField.Name("DPoP")!] = "eyJS-HVLOG3.x.y"
            answer.headerFields[HTTPField.Name("X-Next")!] = "password%253DS-HVLOG4"
            harness.server.stub(.get, "/v1/items", answer)
            var dependencies = harness.dependencies
            dependencies.transport = try RecordingTransport(dependencies.transport, file: file, masking: dependencies.apiConfig.redaction)
            _ = try await API(dependencies: dependencies).call(AdHocRequest<[String: Int], Empty>(.show, "items", parameters: Empty()))
            let recorded = try String(contentsOf: file, encoding: .utf8)
            #expect(!harness.logText.contains("S-HVLOG"), "\(harness.logText)")
            #expect(!recorded.contains("S-HVLOG"), "\(recorded)")
            #expect(harness.logText.contains("x-upstream") || harness.logText.contains("X-Upstream"))
        }
    }
}
