import Foundation
import HTTPTypes
import NIOCore
import Resourceful
import ResourcefulTesting
import Testing

/// Middlewares after the redirect step see each hop; whatever they add, a hop to another origin
/// leaves without a secret, and a streamed body is never sent twice.
@Suite struct CrossOriginHopTests {
    static let signature = HTTPField.Name("X-Request-Signature")!

    /// Signs every request it sees, as a user's signing step would.
    struct Signing: APIMiddleware {
        func intercept(
            _ request: TransportRequest, context: CallContext,
            next: (TransportRequest, CallContext) async throws -> TransportResponse
        ) async throws -> TransportResponse {
            var request = request
            request.headerFields[CrossOriginHopTests.signature] = "sig-SECRET-9a1"
            request.headerFields[.authorization] = "Bearer re-added-SECRET-77"
            return try await next(request, context)
        }
    }

    struct Refresher: CredentialRefresher {
        let calls: Locked<Int>
        func refreshCredential(for service: String) async throws -> String {
            calls.withLock { $0 += 1 }
            return "Bearer refreshed-SECRET-5c"
        }
    }

    @Test func aMiddlewareAfterTheRedirectStepCannotSendASecretToAnotherOrigin() async throws {
        try await Harness.run { harness in
            try await MockServer.withRunning { other in
                other.stub(.get, "/elsewhere", .status(.noContent))
                harness.server.stub(.get, "/v1/x", MockResponse(status: .found, headerFields: [.location: other.baseURL.absoluteString + "/elsewhere"]))
                let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [Signing()])
                _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "x"))
                // The call's own origin got the signature and the credential.
                #expect(harness.server.requests.first?.headerFields[Self.signature] == "sig-SECRET-9a1" ? true : false)
                let arrived = try #require(other.requests.first)
                // Checked without printing the values, should they arrive.
                #expect(arrived.headerFields[Self.signature] == nil ? true : false)
                #expect(arrived.headerFields[.authorization] == nil ? true : false)
            }
        }
    }

    /// Adds header fields of these names, as a user's step after the redirect step might.
    struct AddFields: APIMiddleware {
        let names: [String]
        func intercept(
            _ request: TransportRequest, context: CallContext,
            next: (TransportRequest, CallContext) async throws -> TransportResponse
        ) async throws -> TransportResponse {
            var request = request
            for name in names { request.headerFields[HTTPField.Name(name)!] = "value-SECRET-\(name)" }
            return try await next(request, context)
        }
    }

    /// The cross-origin strip and the log masking are one rule: a field the logs would mask never
    /// reaches another origin, whichever step added it; one they show does.
    @Test func everyFieldTheLogsWouldMaskIsDroppedBeforeAnotherOrigin() async throws {
        let names = [
            "X-Auth", "X-Key", "X-Auth-Token", "X-Api-Key", "X-Session", "X-Tenant-Secret", "X-Request-Id", "X-Trace-Sampled", "DPoP",
            "X-Secrets", "X-Api-Keys", "X-Vault-Token",
        ]
        try await Harness.run(configure: { $0.logging.maskedHeaders = ["X-Tenant-Secret"] }) { harness in
            try await MockServer.withRunning { other in
                other.stub(.get, "/elsewhere", .status(.noContent))
                harness.server.stub(.get, "/v1/x", MockResponse(status: .found, headerFields: [.location: other.baseURL.absoluteString + "/elsewhere"]))
                let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [AddFields(names: names)])
                _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "x"))
                let home = try #require(harness.server.requests.first)
                let arrived = try #require(other.requests.first)
                for name in names {
                    let field = HTTPField.Name(name)!
                    #expect(home.headerFields[field] != nil, "\(name)")
                    let masked = api.defaultOptions.redactor.masksHeader(field.canonicalName)
                    // Checked without printing the values, should they arrive.
                    #expect((arrived.headerFields[field] == nil) == masked, "\(name)")
                }
                for name in ["X-Auth", "X-Key", "X-Auth-Token", "X-Tenant-Secret", "DPoP", "X-Secrets", "X-Api-Keys", "X-Vault-Token"] {
                    #expect(arrived.headerFields[HTTPField.Name(name)!] == nil ? true : false, "\(name)")
                }
                #expect(arrived.headerFields[HTTPField.Name("X-Request-Id")!] != nil)
            }
        }
    }

    @Test func anotherOriginsUnauthorizedIsNotAnsweredWithACredential() async throws {
        try await Harness.run { harness in
            try await MockServer.withRunning { other in
                other.stub(.get, "/elsewhere", .status(.unauthorized), .status(.noContent))
                harness.server.stub(.get, "/v1/x", MockResponse(status: .found, headerFields: [.location: other.baseURL.absoluteString + "/elsewhere"]))
                let calls = Locked(0)
                let api = API(
                    dependencies: harness.dependencies,
                    middlewares: [RetryMiddleware(), LoggingMiddleware(), RedirectMiddleware(), CredentialRefreshMiddleware(refresher: Refresher(calls: calls))]
                )
                let error = await #expect(throws: APIError.self) { try await api.call(AdHocRequest<Empty, Empty>(.show, "x")) }
                #expect(error?.status == .unauthorized)
                #expect(calls.value == 0)
                #expect(other.requests.count == 1)
                #expect(other.requests.allSatisfy { $0.headerFields[.authorization] == nil })
            }
        }
    }

    /// Streams the collected body it is given, as a file upload would.
    struct StreamTheBody: APIMiddleware {
        func intercept(
            _ request: TransportRequest, context: CallContext,
            next: (TransportRequest, CallContext) async throws -> TransportResponse
        ) async throws -> TransportResponse {
            guard let bytes = request.body?.bytes else { return try await next(request, context) }
            var request = request
            request.body = TransportBody(stream: AsyncStream { $0.yield(bytes); $0.finish() }, length: bytes.readableBytes)
            return try await next(request, context)
        }
    }

    @Test func aStreamedBodyIsNotSentAgainByARetryOrARedirect() async throws {
        try await Harness.run(configure: { $0.retry.baseDelay = .milliseconds(1) }) { harness in
            harness.server.stub(.put, "/v1/flaky", .status(.serviceUnavailable), .status(.noContent))
            harness.server.stub(.put, "/v1/moved", MockResponse(status: .temporaryRedirect, headerFields: [.location: "/v1/flaky"]))
            let api = API(dependencies: harness.dependencies, middlewares: [StreamTheBody()] + API.defaultMiddlewares)
            let retried = await #expect(throws: APIError.self) {
                try await api.call(AdHocRequest<Empty, [String: String]>(.update, "flaky", parameters: ["name": "x"]))
            }
            #expect(retried?.status == .serviceUnavailable)
            #expect(harness.server.requests.count == 1)
            let redirected = await #expect(throws: APIError.self) {
                try await api.call(AdHocRequest<Empty, [String: String]>(.update, "moved", parameters: ["name": "x"]))
            }
            #expect(redirected?.kind == .redirectRefused, "\(redirected.map { String(describing: $0) } ?? "no error")")
            #expect(harness.server.requests.count == 2)
            #expect(harness.server.requests.allSatisfy { !$0.body.isEmpty })
        }
    }

    @Test func collectedBodiesAreBoundedByTheCallsLimitToo() async throws {
        let stub = StubTransport { _ in TransportResponse(status: .ok, body: ByteBuffer(string: String(repeating: "1", count: 2048))) }
        var config = APIConfig(baseURL: URL(string: "http://127.0.0.1:9/v1")!, service: "s")
        config.maxResponseBytes = 1024
        let api = API(dependencies: APIDependencies(apiConfig: config, transport: stub))
        let error = await #expect(throws: APIError.self) { try await api.call(AdHocRequest<Int, Empty>(.show, "n")) }
        #expect(error?.kind == .responseTooLarge)
    }

    /// Adds a key to the query of every request it sees, as a key-in-the-URL API's step would.
    struct QueryKey: APIMiddleware {
        func intercept(
            _ request: TransportRequest, context: CallContext,
            next: (TransportRequest, CallContext) async throws -> TransportResponse
        ) async throws -> TransportResponse {
            var request = request
            request.target.query.append(.init(name: "api_key", value: "query-SECRET-31"))
            return try await next(request, context)
        }
    }

    @Test func aRedirectGoesWhereItsLocationSaysWhateverTheStepsAfterItChange() async throws {
        try await Harness.run { harness in
            try await MockServer.withRunning { other in
                other.stub(.get, "/elsewhere", .status(.noContent))
                harness.server.stub(.get, "/v1/x", MockResponse(status: .found, headerFields: [.location: other.baseURL.absoluteString + "/elsewhere?sig=from-location"]))
                let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [QueryKey()])
                _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "x"))
                let arrived = try #require(other.requests.first)
                // The `Location`'s own query (a signed URL's) is kept; nothing added is.
                #expect(arrived.path == "/elsewhere")
                #expect(arrived.query == "sig=from-location")
            }
        }
    }

    @Test func aRedirectBackFromAnotherOriginCarriesNoSecret() async throws {
        try await Harness.run { harness in
            try await MockServer.withRunning { other in
                let back = harness.server.baseURL.absoluteString + "/v1/admin/delete-everything?confirm=1"
                other.stub(.get, "/elsewhere", MockResponse(status: .found, headerFields: [.location: back]))
                harness.server.stub(.get, "/v1/x", MockResponse(status: .found, headerFields: [.location: other.baseURL.absoluteString + "/elsewhere"]))
                harness.server.stub(.get, "/v1/admin/delete-everything", .status(.noContent))
                let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [Signing()])
                _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "x"))
                let last = try #require(harness.server.requests.last)
                #expect(last.path == "/v1/admin/delete-everything")
                #expect(last.headerFields[.authorization] == nil ? true : false)
                #expect(last.headerFields[Self.signature] == nil ? true : false)
            }
        }
    }

    /// Configured base headers belong to the API's origin, whatever their names: none follows a
    /// redirect to another origin, whether the redirect step carries it or a step after it sets
    /// it again; they stay on a redirect within the origin.
    @Test func configuredBaseHeadersStayWithTheAPIsOrigin() async throws {
        let artifactKey = HTTPField.Name("X-JFrog-Art-Api")!
        let tenant = HTTPField.Name("X-Tenant")!
        try await Harness.run(configure: { $0.baseHeaders = ["X-JFrog-Art-Api": "JF1-SECRET-3b", "X-Tenant": "acme"] }) { harness in
            try await MockServer.withRunning { other in
                other.stub(.get, "/elsewhere", .status(.noContent))
                harness.server.stub(.get, "/v1/x", MockResponse(status: .found, headerFields: [.location: "/v1/y"]))
                let elsewhere = other.baseURL.absoluteString + "/elsewhere"
                harness.server.stub(.get, "/v1/y", MockResponse(status: .found, headerFields: [.location: elsewhere]))
                _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x"))
                #expect(harness.server.requests.count == 2)
                #expect(harness.server.requests.allSatisfy { $0.headerFields[artifactKey] != nil && $0.headerFields[tenant] == "acme" })
                let arrived = try #require(other.requests.first)
                // Checked without printing the values, should they arrive.
                #expect(arrived.headerFields[artifactKey] == nil ? true : false)
                #expect(arrived.headerFields[tenant] == nil)

                harness.server.stub(.get, "/v1/z", MockResponse(status: .found, headerFields: [.location: elsewhere]))
                let adding = AddFields(names: ["X-JFrog-Art-Api"])
                let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [adding])
                _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "z"))
                let again = try #require(other.requests.last)
                #expect(other.requests.count == 2)
                #expect(again.headerFields[artifactKey] == nil ? true : false)
            }
        }
    }

    @Test func aCreateRedirectedToAnUnauthorizedAnswerIsNotRefreshedAndSentAgain() async throws {
        try await Harness.run { harness in
            try await MockServer.withRunning { other in
                other.stub(.get, "/done", .status(.unauthorized))
                harness.server.stub(.post, "/v1/charges", MockResponse(status: .seeOther, headerFields: [.location: other.baseURL.absoluteString + "/done"]))
                let calls = Locked(0)
                let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares(refresher: Refresher(calls: calls)))
                let error = await #expect(throws: APIError.self) {
                    try await api.call(AdHocRequest<Empty, [String: Int]>(.create, "charges", parameters: ["amount": 5]))
                }
                #expect(error?.status == .unauthorized)
                #expect(calls.value == 0)
                #expect(harness.server.requests.count == 1)
            }
        }
    }

    @Test func aBasePathThatRunsIntoTheAuthorityIsAnotherOrigin() {
        let call = RequestTarget(origin: "https://api.example.com", basePath: "/v1", path: "x")
        var changed = call
        changed.basePath = "@evil.example"
        #expect(changed.url.hasPrefix("https://api.example.com@evil.example"))
        #expect(!changed.sameOrigin(as: call))
        #expect(call.sameOrigin(as: RequestTarget(parsing: "HTTPS://API.EXAMPLE.COM:443/v1/y")))
    }
}
