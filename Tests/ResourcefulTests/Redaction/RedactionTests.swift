import Foundation
import InMemoryLogging
import Logging
import HTTPTypes
import Logging
import Resourceful
import ResourcefulTesting
import Testing

@Suite struct RedactionTests {
    static let token = "Bearer tok-7Hq2-SECRET"
    static let apiKey = "key-9931-SECRET"
    static let password = "pw-correct-horse-SECRET"
    static let refresh = "refresh-55aa-SECRET"

    struct Login: ResourceRequest {
        typealias ResourceType = Session
        struct Parameters: Encodable, Sendable { var user: String; var password: String }
        let verb = ResourceVerb.create
        let path: ResourcePath = "sessions"
        let parameters: Parameters
        var shouldRedactRequestBody: Bool { true }
    }

    struct Session: Codable, Sendable { var user: String; var refresh_token: String; var expires: Int }

    struct Profile: ResourceRequest {
        typealias ResourceType = Session
        struct Parameters: Encodable, Sendable { var user: String; var nested: Nested }
        struct Nested: Encodable, Sendable { var password: String; var note: String }
        let verb = ResourceVerb.update
        let path: ResourcePath = "profile"
        let parameters: Parameters
        var headers: [String: String] { ["X-Api-Key": RedactionTests.apiKey, "Cookie": "sid=\(RedactionTests.apiKey)"] }
    }

    @Test func secretsNeverReachTheLogsWhileOtherDetailsDo() async throws {
        try await Harness.run(authorization: Self.token) { harness in
            var response = try MockResponse.json(Session(user: "ada", refresh_token: Self.refresh, expires: 3600))
            response.headerFields[.setCookie] = "sid=\(Self.apiKey)"
            harness.server.stub(.put, "/v1/profile", response)
            let request = Profile(parameters: .init(user: "ada", nested: .init(password: Self.password, note: "visible-note")))
            _ = try await harness.api.call(request)

            let text = harness.logText
            for secret in [Self.token, "tok-7Hq2", Self.apiKey, Self.password, Self.refresh] {
                #expect(!text.contains(secret), "a secret reached the logs")
            }
            #expect(harness.logs.entries.map(\.message.description) == ["Sending request", "Received response"])
            let sent = try #require(harness.logs.entries.first?.metadata)
            let received = try #require(harness.logs.entries.last?.metadata)
            #expect(sent["resourceful.method"] == "PUT")
            #expect(sent["resourceful.path"] == "/profile")
            #expect(received["resourceful.status"]?.description == "200")
            #expect(received["resourceful.duration-ms"] != nil)
            #expect(sent["resourceful.request-id"] == received["resourceful.request-id"])
            #expect(text.contains("visible-note"))
            #expect(text.contains("\"password\":\"***\""))
            #expect(text.contains("\"refresh_token\":\"***\""))
            guard case .dictionary(let headers) = sent["resourceful.request.headers"] else {
                Issue.record("no request headers logged")
                return
            }
            #expect(headers["authorization"] == "***")
            #expect(headers["x-api-key"] == "***")
            #expect(headers["cookie"] == "***")
            #expect(headers["accept"] == "application/json")
        }
    }

    @Test func optedOutRequestBodyNeverAppears() async throws {
        try await Harness.run { harness in
            harness.server.stub(.post, "/v1/sessions", try .json(Session(user: "ada", refresh_token: "r", expires: 1), status: .created))
            _ = try await harness.api.call(Login(parameters: .init(user: "ada-login-name", password: "unmaskable-but-redacted")))
            #expect(!harness.logText.contains("unmaskable-but-redacted"))
            #expect(!harness.logText.contains("ada-login-name"))
            #expect(harness.logText.contains("<redacted,"))
            #expect(harness.server.requests.first?.bodyText.contains("unmaskable-but-redacted") == true)
        }
    }

    @Test func optedOutResponseBodyNeverAppears() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/export", .json(raw: #"{"data":"private-export-content"}"#))
            let request = AdHocRequest<[String: String], Empty>(.show, "export", parameters: Empty(), shouldRedactResponseBody: true)
            _ = try await harness.api.call(request)
            #expect(!harness.logText.contains("private-export-content"))
        }
    }

    @Test func maskedQueryParametersAndFailures() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/search", MockResponse.closeConnection)
            let request = AdHocRequest<Empty, [String: String]>(.index, "search", parameters: ["token": "query-token-SECRET", "q": "visible-q"])
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(request) }
            #expect(error?.kind == .transport)
            #expect(!harness.logText.contains("query-token-SECRET"))
            #expect(harness.logText.contains("visible-q"))
            #expect(harness.logs.entries.last?.message.description == "Request failed")
            #expect(harness.logs.entries.last?.metadata["resourceful.error"] == "transport")
        }
    }

    @Test func bodiesAreCutToTheConfiguredSize() async throws {
        try await Harness.run(configure: { $0.logging.maxBodyBytes = 16 }) { harness in
            let long = String(repeating: "x", count: 500)
            harness.server.stub(.get, "/v1/long", .json(raw: #"{"text":"\#(long)"}"#))
            _ = try await harness.api.call(AdHocRequest<[String: String], Empty>(.show, "long"))
            let body = harness.logs.entries.last?.metadata["resourceful.response.body"]?.description ?? ""
            #expect(body.hasPrefix(#"{"text":"xxxxxxx"#))
            #expect(body.hasSuffix("(511 bytes)"))
        }
    }

    @Test func nonJSONBodiesAreNotLoggedVerbatim() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/plain", MockResponse(status: .ok, headerFields: [.contentType: "text/plain"], body: Data("token=plain-SECRET".utf8)))
            _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "plain"))
            #expect(!harness.logText.contains("plain-SECRET"))
            #expect(harness.logText.contains("<18 bytes of text/plain>"))
        }
    }

    @Test func nothingIsLoggedAboveDebug() async throws {
        try await Harness.run { harness in
            harness.dependencies.logger.logLevel = .info
            harness.server.stub(.get, "/v1/quiet", .status(.noContent))
            _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "quiet"))
            #expect(harness.logs.entries.isEmpty)
        }
    }
}
