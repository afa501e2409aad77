import Foundation
import HTTPTypes
import ResourcefulTesting
import Testing

@testable import Resourceful

/// A plural of a name for a secret (`passwords`, `secrets`, `apiKeys`, `X-Api-Keys`) is masked
/// as its singular is: in JSON keys, form and query names, header names, log lines, HAR files
/// and cURL exports.
@Suite struct PluralSecretNameTests {
    static let redactor = Redactor(settings: APIConfig.LogSettings())
    static let plurals = [
        "passwords", "secrets", "tokens", "apiKeys", "api_keys", "refresh_tokens", "clientSecrets", "privateKeys",
        "signingKeys", "passphrases", "cookies", "access_tokens", "API_KEYS", "credentials", "passes", "keys", "pins",
        "otp_codes", "sessions",
    ]
    static let pluralHeaders = ["X-Secrets", "X-Api-Keys", "X-Tokens", "X-Passwords", "X-Cookies", "X-Signatures"]
    /// Plurals of ordinary names, and words that only end like a plural, stay readable.
    static let ordinary = [
        "sortKeys", "primary_keys", "publicKeys", "idempotency_keys", "addresses", "status", "progress", "bypasses",
        "monkeys", "compasses", "passengers", "passports", "keyboards", "tokenizers", "authors", "codes", "error_codes",
        "session_counts", "cache_keys",
    ]

    @Test(arguments: plurals)
    func aPluralOfASecretNameIsMasked(name: String) {
        #expect(SensitiveNames().contains(name))
    }

    @Test(arguments: pluralHeaders)
    func aPluralHeaderNameIsMasked(name: String) {
        #expect(SensitiveNames.isSensitiveHeader(name))
        #expect(Self.redactor.headerValue(HTTPField.Name(name)!, "S-PLURAL") == "***")
    }

    @Test(arguments: ordinary)
    func aPluralOfAnOrdinaryNameStaysReadable(name: String) {
        #expect(!SensitiveNames().contains(name))
    }

    @Test func jsonFormAndQueryMaskPlurals() throws {
        let pairs = Self.plurals.enumerated().map { ($0.element, "S-PL\($0.offset)") }
        let object = Dictionary(uniqueKeysWithValues: pairs.map { ($0.0, $0.1) })
        let json = try JSONSerialization.data(withJSONObject: object.merging(["id": "7"]) { $1 })
        let maskedJSON = String(decoding: try #require(Self.redactor.maskedBody(json, contentType: "application/json")), as: UTF8.self)
        let form = pairs.map { "\($0.0)=\($0.1)" }.joined(separator: "&") + "&id=7"
        let maskedForm = String(
            decoding: try #require(Self.redactor.maskedBody(Data(form.utf8), contentType: "application/x-www-form-urlencoded")), as: UTF8.self)
        let maskedQuery = Self.redactor.query(form)
        for (_, secret) in pairs {
            #expect(!maskedJSON.contains(secret), "\(maskedJSON)")
            #expect(!maskedForm.contains(secret), "\(maskedForm)")
            #expect(!maskedQuery.contains(secret), "\(maskedQuery)")
        }
        #expect(maskedJSON.contains("\"7\"") && maskedForm.hasSuffix("&id=7") && maskedQuery.hasSuffix("&id=7"))
    }

    @Test func logLinesHARFilesAndCURLExportsMaskPlurals() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("plural-\(UUID().uuidString).har")
        defer { try? FileManager.default.removeItem(at: file) }
        try await Harness.run { harness in
            var answer = MockResponse.json(raw: #"{"secrets":"S-PLJSON","api_keys":["S-PLKEY"],"tokens":{"a":"S-PLTOK"},"id":7}"#)
            answer.headerFields[HTTPField.Name("X-Tokens")!] = "S-PLRESP"
            answer.headerFields[HTTPField.Name("X-Secrets")!] = "S-PLRESP2"
            harness.server.stub(.get, "/v1/items", answer)
            var dependencies = harness.dependencies
            dependencies.transport = try RecordingTransport(dependencies.transport, file: file, masking: dependencies.apiConfig.redaction)
            let api = API(dependencies: dependencies)
            let request = AdHocRequest<Empty, [String: String]>(
                .show, "items", parameters: ["refresh_tokens": "S-PLQUERY", "page": "2"],
                headers: ["X-Api-Keys": "S-PLHDR", "X-Secrets": "S-PLHDR2"]
            )
            _ = try? await api.call(request)
            let recorded = try String(contentsOf: file, encoding: .utf8)
            let sent = try #require(harness.server.requests.first)
            #expect(sent.headerFields[HTTPField.Name("X-Api-Keys")!] == "S-PLHDR")
            let target = RequestTarget(parsing: "https://api.example/v1/items?refresh_tokens=S-PLQUERY&page=2")
            var transportRequest = TransportRequest(method: .get, target: target, deadline: .now + .seconds(5), maxResponseBytes: 1024)
            transportRequest.headerFields[HTTPField.Name("X-Api-Keys")!] = "S-PLHDR"
            let command = CURLCommand(redactor: Self.redactor).render(transportRequest)
            for text in [harness.logText, recorded, command] {
                #expect(!text.contains("S-PL"), "\(text)")
            }
            #expect(recorded.contains("page=2") && harness.logText.contains("page=2"))
        }
    }
}
