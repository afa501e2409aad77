import AsyncHTTPClient
import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

/// Redirects to another origin (another port of 127.0.0.1 is another origin): no credential and
/// no body goes there unless the request says so.
@Suite struct RedirectTests {
    static let apiKey = "key-REDIRECT-SECRET-1"
    static let authToken = "auth-REDIRECT-SECRET-2"
    static let tenant = "tenant-REDIRECT-SECRET-3"
    static let password = "pw-REDIRECT-SECRET-4"

    struct Login: ResourceRequest {
        typealias ResourceType = Empty
        struct Parameters: Encodable, Sendable { var user: String; var password: String }
        let verb = ResourceVerb.create
        let path: ResourcePath = "sessions"
        let parameters = Parameters(user: "ada", password: RedirectTests.password)
        var opted = false
        var sendsBodyAcrossOrigins: Bool { opted }
    }

    private static func configure(_ config: inout APIConfig) {
        config.baseHeaders = ["X-Api-Key": apiKey, "X-Trace": "kept"]
        config.http.sensitiveRedirectHeaders = ["X-Tenant"]
    }

    @Test func everyCredentialHeaderIsDroppedBeforeAnotherOrigin() async throws {
        try await Harness.run(configure: Self.configure) { harness in
            try await MockServer.withRunning { other in
                other.stub(.get, "/elsewhere", .status(.noContent))
                harness.server.stub(.get, "/v1/x", MockResponse(status: .found, headerFields: [.location: other.baseURL.absoluteString + "/elsewhere"]))
                let request = AdHocRequest<Empty, Empty>(
                    .show, "x", headers: ["X-Auth-Token": Self.authToken, "X-Tenant": Self.tenant, "X-Request-Id": "kept"])
                _ = try await harness.api.call(request)
                let first = try #require(harness.server.requests.first)
                #expect(first.headerFields[HTTPField.Name("X-Api-Key")!] == Self.apiKey)
                let arrived = try #require(other.requests.first)
                for name in ["Authorization", "X-Api-Key", "X-Auth-Token", "X-Tenant"] {
                    #expect(arrived.headerFields[HTTPField.Name(name)!] == nil, "\(name) followed the redirect")
                }
                // Configured base headers belong to the API's origin, whatever their names; the
                // request's own fields that carry no credential go on.
                #expect(first.headerFields[HTTPField.Name("X-Trace")!] == "kept")
                #expect(arrived.headerFields[HTTPField.Name("X-Trace")!] == nil)
                #expect(arrived.headerFields[HTTPField.Name("X-Request-Id")!] == "kept")
                #expect(harness.logsAreFreeOfSecrets)
                #expect(!harness.logText.contains(Self.apiKey) && !harness.logText.contains(Self.authToken))
            }
        }
    }

    @Test(arguments: [307, 308])
    func aBodyIsNotResentToAnotherOriginUnlessTheRequestOptsIn(code: Int) async throws {
        try await Harness.run(configure: Self.configure) { harness in
            try await MockServer.withRunning { other in
                other.stub(.post, "/take", .status(.noContent))
                let target = other.baseURL.absoluteString + "/take"
                harness.server.stub(.post, "/v1/sessions", MockResponse(status: .init(code: code), headerFields: [.location: target]))
                let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(Login()) }
                #expect(error?.kind == .redirectRefused)
                #expect(error?.detail?.contains("http://127.0.0.1:\(other.port)") == true)
                #expect(other.requests.isEmpty)
                #expect(harness.server.requests.count == 1)
                #expect(!"\(error.map { "\($0)" } ?? "")".contains(Self.password))

                var opted = Login()
                opted.opted = true
                _ = try await harness.api.call(opted)
                let arrived = try #require(other.requests.first)
                #expect(String(decoding: arrived.body, as: UTF8.self).contains(Self.password))
                #expect(arrived.headerFields[.authorization] == nil)
                #expect(arrived.headerFields[HTTPField.Name("X-Api-Key")!] == nil)
            }
        }
    }

    @Test func aBodyFollowsA307WithinTheOrigin() async throws {
        try await Harness.run { harness in
            harness.server.stub(.post, "/v1/sessions", MockResponse(status: .temporaryRedirect, headerFields: [.location: "/v1/sessions2"]))
            harness.server.stub(.post, "/v1/sessions2", .status(.noContent))
            _ = try await harness.api.call(Login())
            let second = try #require(harness.server.requests.last)
            #expect(second.path == "/v1/sessions2")
            #expect(String(decoding: second.body, as: UTF8.self).contains(Self.password))
            #expect(second.headerFields[.authorization] == Harness.token)
        }
    }

    @Test(arguments: ["ftp://127.0.0.1/x", "file:///etc/passwd", "javascript:alert(1)"])
    func aRedirectToAnotherSchemeIsRefusedOnce(location: String) async throws {
        try await Harness.run(configure: FaultMatrixTests.quickRetries) { harness in
            harness.server.stub(.get, "/v1/x", MockResponse(status: .movedPermanently, headerFields: [.location: location]))
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x")) }
            #expect(error?.kind == .redirectRefused)
            #expect(harness.server.requests.count == 1)
            #expect(harness.attemptsLogged == 1)
        }
    }
}

/// An app's own AsyncHTTPClient, set up to follow redirects: the API's rules hold all the same.
@Suite struct CallerClientRedirectTests {
    @Test func aCallersClientDoesNotFollowRedirectsPastTheAPIsRules() async throws {
        let client = AsyncHTTPClient.HTTPClient(eventLoopGroupProvider: .singleton)
        defer { client.shutdown { _ in } }
        try await Harness.run(configure: { $0.baseHeaders = ["X-Api-Key": RedirectTests.apiKey] }) { harness in
            harness.dependencies.transport = AsyncHTTPClientTransport(client: client)
            try await MockServer.withRunning { other in
                other.stub(.post, "/take", .status(.noContent))
                other.stub(.get, "/elsewhere", .status(.noContent))
                // A 307 would make the client send the password to the other origin.
                harness.server.stub(.post, "/v1/sessions", MockResponse(status: .temporaryRedirect, headerFields: [.location: other.baseURL.absoluteString + "/take"]))
                let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(RedirectTests.Login()) }
                #expect(error?.kind == .redirectRefused)
                #expect(other.requests.isEmpty)
                // A 302 is followed by the API, without the configured credential header.
                harness.server.stub(.get, "/v1/x", MockResponse(status: .found, headerFields: [.location: other.baseURL.absoluteString + "/elsewhere"]))
                _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x"))
                let arrived = try #require(other.requests.first)
                #expect(arrived.headerFields[HTTPField.Name("X-Api-Key")!] == nil)
                #expect(harness.server.requests.last?.headerFields[HTTPField.Name("X-Api-Key")!] == RedirectTests.apiKey)
            }
        }
    }
}
