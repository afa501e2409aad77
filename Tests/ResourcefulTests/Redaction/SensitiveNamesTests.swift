import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

/// The names people use for secrets, in Swift property names, snake_case, kebab-case and header
/// form, are masked in every part of a log line without any configuration.
@Suite struct SensitiveNamesTests {
    struct Grant: Encodable, Sendable {
        var accessToken = "AT-SECRET-1"
        var refreshToken = "RT-SECRET-2"
        var clientSecret = "CS-SECRET-3"
        var apiKey = "AK-SECRET-4"
        var id_token = "IT-SECRET-5"
        var privateKey = "PK-SECRET-6"
        var sessionId = "SI-SECRET-7"
        var nested = Nested()
        var note = "visible-note"
    }

    struct Nested: Encodable, Sendable {
        var newPassword = "NP-SECRET-8"
        var otp = "OTP-SECRET-9"
    }

    struct Search: Encodable, Sendable {
        var api_key = "QK-SECRET-10"
        var key = "GK-SECRET-11"
        var q = "visible-query"
    }

    static let secrets = (1...14).map { "SECRET-\($0)" }

    private func expectNoSecret(_ harness: Harness) {
        for secret in Self.secrets {
            #expect(!harness.logText.contains(secret), "\(secret) was logged")
        }
    }

    @Test func jsonKeysInEveryCaseAreMaskedInRequestAndResponseBodies() async throws {
        try await Harness.run(configure: { $0.logging.maskedBodyKeys = [] }) { harness in
            harness.server.stub(.post, "/v1/grants", .json(raw: #"{"access_token":"AT-SECRET-1","X-Refresh-Token":"RT-SECRET-2","expires_in":3600}"#, status: .created))
            _ = try await harness.api.call(AdHocRequest<[String: JSONScalar], Grant>(.create, "grants", parameters: Grant()))
            expectNoSecret(harness)
            #expect(harness.logText.contains("visible-note"))
            #expect(harness.logText.contains("3600"))
        }
    }

    @Test func queryFormFieldsAndResponseHeadersAreMasked() async throws {
        try await Harness.run { harness in
            var response = MockResponse.status(.noContent)
            response.headerFields[HTTPField.Name("X-Auth-Token")!] = "HT-SECRET-12"
            response.headerFields[HTTPField.Name("X-Subject-Token")!] = "ST-SECRET-13"
            harness.server.stub(.get, "/v1/search", response)
            harness.server.stub(.post, "/v1/form", .status(.noContent))
            _ = try await harness.api.call(AdHocRequest<Empty, Search>(.index, "search", parameters: Search()))
            _ = try await harness.api.call(
                AdHocRequest<Empty, [String: String]>(.create, "form", parameters: ["client_secret": "FS-SECRET-14", "grant_type": "password"], bodyEncoding: .formURLEncoded)
            )
            #expect(harness.server.requests.first?.query.contains("QK-SECRET-10") == true)
            expectNoSecret(harness)
            #expect(harness.logText.contains("visible-query"))
            #expect(harness.logText.contains("grant_type=password"))
        }
    }

    @Test func ordinaryNamesStayVisible() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/x", .json(raw: #"{"tokenizer":"kept-1","keyboard":"kept-2","session_count":3,"monkey":"kept-4"}"#))
            _ = try await harness.api.call(AdHocRequest<[String: JSONScalar], Empty>(.show, "x"))
            for kept in ["kept-1", "kept-2", "kept-4"] { #expect(harness.logText.contains(kept)) }
        }
    }

    @Test func theBuiltInNamesAreDocumented() {
        #expect(APIConfig.LogSettings.alwaysMaskedNames.contains("token"))
        #expect(APIConfig.LogSettings.alwaysMaskedNames.contains("apiKey"))
    }
}

/// A string or number, for bodies read as dictionaries in these tests.
enum JSONScalar: Decodable, Sendable {
    case text(String), number(Double)
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) { self = .text(text) } else { self = .number(try container.decode(Double.self)) }
    }
}
