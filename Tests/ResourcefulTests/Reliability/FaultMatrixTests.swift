import Foundation
import HTTPTypes
import InMemoryLogging
import Logging
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

/// One test per fault: the error kind, the attempts the server saw, and no secret in the logs.
@Suite struct FaultMatrixTests {
    /// Fast retries, so the matrix runs quickly. A refused connection fails at once whatever the
    /// connect time-out, so it stays long enough for a loaded machine (or ThreadSanitizer) to open
    /// connections in.
    static func quickRetries(_ config: inout APIConfig) {
        config.retry = .init(maxAttempts: 3, baseDelay: .milliseconds(5), maxDelay: .milliseconds(20))
        config.http.connectTimeout = .seconds(5)
    }

    private func expectFailure(
        _ harness: Harness,
        _ kind: APIError.Kind,
        attempts: Int,
        _ call: () async throws -> Void
    ) async {
        let error = await #expect(throws: APIError.self) { try await call() }
        #expect(error?.kind == kind)
        #expect(harness.server.requests.count == attempts)
        #expect(harness.logsAreFreeOfSecrets)
        #expect(!(error.map { "\($0)" } ?? "").contains("test-token"))
    }

    @Test func connectionRefused() async throws {
        try await Harness.run(configure: Self.quickRetries) { harness in
            let closed = try await MockServer.start()
            let url = closed.baseURL
            try await closed.shutdown()
            harness.dependencies.apiConfig.baseURL = url
            harness.dependencies.apiConfig.http.connectRetryBudget = .milliseconds(300)
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x")) }
            #expect(error?.kind == .transport)
            // The transport tried to connect until its budget was spent; the retry policy does
            // not spend it again.
            #expect(harness.attemptsLogged == 1)
            #expect(error?.description.contains("was refused") == true)
            #expect(harness.logsAreFreeOfSecrets)
        }
    }

    @Test func resetBeforeHeaders() async throws {
        try await Harness.run(configure: Self.quickRetries) { harness in
            harness.server.stub(.get, "/v1/x", .closeConnection)
            await expectFailure(harness, .transport, attempts: 3) { _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x")) }
        }
    }

    /// A connection that closes before any of the answer (a keep-alive connection the server
    /// dropped) is sent again at once; only a second such failure waits for the backoff.
    @Test func closedBeforeTheAnswerIsResentAtOnceThenBacksOff() async throws {
        try await Harness.run(configure: { $0.retry = .init(maxAttempts: 3, baseDelay: .seconds(1), maxDelay: .seconds(1)); $0.timeout = .seconds(30) }) { harness in
            harness.server.stub(.get, "/v1/x", .closeConnection, .closeConnection, .status(.noContent))
            _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x"))
            let waits = harness.logs.entries.filter { $0.message.description == "Retrying request" }.map { $0.metadata["resourceful.retry-wait-ms"]?.description }
            #expect(waits.count == 2)
            #expect(waits.first == "0")
            #expect(harness.server.requests.count == 3)
        }
    }

    @Test func resetMidBody() async throws {
        try await Harness.run(configure: Self.quickRetries) { harness in
            harness.server.stub(.get, "/v1/x", MockResponse(status: .ok, headerFields: [.contentType: "application/json"], body: Data(repeating: 0x61, count: 200), fault: .closeMidBody(bytes: 10)))
            await expectFailure(harness, .transport, attempts: 3) { _ = try await harness.api.call(AdHocRequest<[String: String], Empty>(.show, "x")) }
        }
    }

    /// Long enough for a request to reach the server on a loaded machine; the server's delays
    /// are far past it (and end when the server shuts down).
    static let slowServerDeadline = Duration.seconds(20)

    @Test func slowHeadersPastTheDeadline() async throws {
        try await Harness.run(configure: { Self.quickRetries(&$0); $0.timeout = Self.slowServerDeadline }) { harness in
            harness.server.stub(.get, "/v1/x", MockResponse.status(.ok).delayed(by: Self.slowServerDeadline * 30))
            await expectFailure(harness, .timeout, attempts: 1) { _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x")) }
        }
    }

    @Test func slowBodyPastTheDeadline() async throws {
        try await Harness.run(configure: { Self.quickRetries(&$0); $0.timeout = Self.slowServerDeadline }) { harness in
            var response = MockResponse.json(raw: #"{"a":"b"}"#)
            response.bodyDelay = Self.slowServerDeadline * 30
            harness.server.stub(.get, "/v1/x", response)
            await expectFailure(harness, .timeout, attempts: 1) { _ = try await harness.api.call(AdHocRequest<[String: String], Empty>(.show, "x")) }
        }
    }

    @Test func status500IsNotRetried() async throws {
        try await Harness.run(configure: Self.quickRetries) { harness in
            harness.server.stub(.get, "/v1/x", .status(.internalServerError))
            await expectFailure(harness, .unacceptableStatus, attempts: 1) { _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x")) }
        }
    }

    @Test func status502503504ThenSuccess() async throws {
        try await Harness.run(configure: { Self.quickRetries(&$0); $0.retry.maxAttempts = 4 }) { harness in
            harness.server.stub(.get, "/v1/x", .status(.badGateway), .status(.serviceUnavailable), .status(.gatewayTimeout), .json(raw: #"{"ok":"yes"}"#))
            let value = try await harness.api.call(AdHocRequest<[String: String], Empty>(.show, "x"))
            #expect(value == ["ok": "yes"])
            #expect(harness.server.requests.count == 4)
            #expect(harness.server.requests.allSatisfy { $0.headerFields[.authorization] == Harness.token })
            #expect(harness.logsAreFreeOfSecrets)
        }
    }

    @Test func status429WithRetryAfterSeconds() async throws {
        try await Harness.run(configure: Self.quickRetries) { harness in
            var tooMany = MockResponse.status(.tooManyRequests)
            tooMany.headerFields[.retryAfter] = "1"
            harness.server.stub(.get, "/v1/x", tooMany, .status(.noContent))
            let start = ContinuousClock.now
            _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x"))
            #expect(ContinuousClock.now - start >= .milliseconds(950))
            #expect(harness.server.requests.count == 2)
            #expect(harness.logsAreFreeOfSecrets)
        }
    }

    @Test func status429WithRetryAfterDate() async throws {
        try await Harness.run(configure: Self.quickRetries) { harness in
            let server = harness.server
            harness.server.route(.get, "/v1/x") { _ in
                guard server.requests.count == 1 else { return .status(.noContent) }
                var tooMany = MockResponse.status(.tooManyRequests)
                let formatter = DateFormatter()
                formatter.locale = Locale(identifier: "en_US_POSIX")
                formatter.timeZone = TimeZone(identifier: "GMT")
                formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
                tooMany.headerFields[.retryAfter] = formatter.string(from: Date().addingTimeInterval(2))
                return tooMany
            }
            let start = ContinuousClock.now
            _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x"))
            #expect(ContinuousClock.now - start >= .milliseconds(900))
            #expect(harness.server.requests.count == 2)
        }
    }

    @Test func retryAfterPastTheDeadlineIsNotWaitedFor() async throws {
        let deadline = Duration.seconds(30)
        try await Harness.run(configure: { Self.quickRetries(&$0); $0.timeout = deadline }) { harness in
            var tooMany = MockResponse.status(.tooManyRequests)
            tooMany.headerFields[.retryAfter] = "300"
            harness.server.stub(.get, "/v1/x", tooMany)
            let start = ContinuousClock.now
            await expectFailure(harness, .unacceptableStatus, attempts: 1) { _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x")) }
            // At once: neither the 300 s asked for nor the deadline (half of it allows for a
            // loaded machine).
            #expect(ContinuousClock.now - start < deadline / 2)
        }
    }

    @Test func retriesExhausted() async throws {
        try await Harness.run(configure: Self.quickRetries) { harness in
            harness.server.stub(.get, "/v1/x", .status(.serviceUnavailable))
            await expectFailure(harness, .unacceptableStatus, attempts: 3) { _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x")) }
        }
    }

    @Test func createIsNotRetriedByDefault() async throws {
        try await Harness.run(configure: Self.quickRetries) { harness in
            harness.server.stub(.post, "/v1/orders", .status(.serviceUnavailable), .status(.created))
            await expectFailure(harness, .unacceptableStatus, attempts: 1) {
                _ = try await harness.api.call(AdHocRequest<Empty, [String: Int]>(.create, "orders", parameters: ["qty": 1]))
            }
            #expect(harness.server.requests.first?.headerFields[HTTPField.Name("Idempotency-Key")!] == nil)
        }
    }

    struct RetryableCreate: ResourceRequest {
        typealias ResourceType = Empty
        let verb = ResourceVerb.create
        let path: ResourcePath = "orders"
        let parameters = ["qty": 1]
        var allowsRetries: Bool { true }
    }

    @Test func createThatOptsInIsRetriedWithOneIdempotencyKey() async throws {
        try await Harness.run(configure: Self.quickRetries) { harness in
            harness.server.stub(.post, "/v1/orders", .status(.serviceUnavailable), .closeConnection, .status(.created))
            _ = try await harness.api.call(RetryableCreate())
            let keys = harness.server.requests.map { $0.headerFields[HTTPField.Name("Idempotency-Key")!] }
            #expect(keys.count == 3)
            #expect(keys.allSatisfy { $0 != nil && $0 == keys.first })
            #expect(harness.server.requests.allSatisfy { $0.bodyText == #"{"qty":1}"# })
            _ = try await harness.api.call(RetryableCreate())
            #expect(harness.server.requests.last?.headerFields[HTTPField.Name("Idempotency-Key")!] != keys.first)
        }
    }

    @Test func cancellationMidRequest() async throws {
        try await Harness.run(configure: Self.quickRetries) { harness in
            let arrived = Event()
            harness.server.route(.get, "/v1/x") { _ in
                arrived.happen()
                // Far past the wait for its arrival: only the cancellation ends the call.
                return MockResponse.status(.noContent).delayed(by: .seconds(600))
            }
            let api = harness.api
            let task = Task { try await api.call(AdHocRequest<Empty, Empty>(.show, "x")) }
            await arrived.wait(timeout: .seconds(60))
            task.cancel()
            let result = await task.result
            guard case .failure(let error as APIError) = result else {
                Issue.record("the call did not fail with an APIError")
                return
            }
            #expect(error.kind == .cancelled)
            #expect(harness.server.requests.count == 1)
            #expect(harness.logsAreFreeOfSecrets)
        }
    }

    @Test(arguments: [
        ("malformed", #"{"name": nope}"#, "application/json"),
        ("truncated", #"{"name": "Ada", "tags": ["a", "#, "application/json"),
        ("wrong type", "<html>hello</html>", "text/html; charset=utf-8"),
    ])
    func undecodableBodies(name: String, body: String, contentType: String) async throws {
        try await Harness.run(configure: Self.quickRetries) { harness in
            harness.server.stub(.get, "/v1/x", MockResponse(status: .ok, headerFields: [.contentType: contentType], body: Data(body.utf8)))
            await expectFailure(harness, .decodingFailed, attempts: 1) { _ = try await harness.api.call(AdHocRequest<[String: String], Empty>(.show, "x")) }
            if contentType.hasPrefix("text/html") {
                let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(AdHocRequest<[String: String], Empty>(.show, "x")) }
                #expect(error?.detail == "the body is text/html, not JSON")
            }
        }
    }

    @Test func emptyBodyForAValueType() async throws {
        try await Harness.run(configure: Self.quickRetries) { harness in
            harness.server.stub(.get, "/v1/x", .status(.ok))
            await expectFailure(harness, .decodingFailed, attempts: 1) { _ = try await harness.api.call(AdHocRequest<[String: String], Empty>(.show, "x")) }
        }
    }

    @Test func bodyOverTheCap() async throws {
        try await Harness.run(configure: { Self.quickRetries(&$0); $0.maxResponseBytes = 100 }) { harness in
            harness.server.stub(.get, "/v1/x", .json(raw: "[" + String(repeating: "1,", count: 500) + "1]"))
            await expectFailure(harness, .responseTooLarge, attempts: 1) { _ = try await harness.api.call(AdHocRequest<[Int], Empty>(.show, "x")) }
        }
    }

    @Test func redirectLoop() async throws {
        try await Harness.run(configure: { Self.quickRetries(&$0); $0.http.maxRedirects = 3 }) { harness in
            harness.server.route(.get, "/v1/hop/:n") { request in
                let n = Int(request.pathParameters["n"] ?? "") ?? 0
                return MockResponse(status: .found, headerFields: [.location: "/v1/hop/\(n + 1)"])
            }
            await expectFailure(harness, .tooManyRedirects, attempts: 4) { _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "hop/1")) }
        }
    }

    @Test func redirectBackToAnEarlierURLIsALoop() async throws {
        try await Harness.run(configure: Self.quickRetries) { harness in
            harness.server.stub(.get, "/v1/a", MockResponse(status: .found, headerFields: [.location: "/v1/b"]))
            harness.server.stub(.get, "/v1/b", MockResponse(status: .movedPermanently, headerFields: [.location: "/v1/a"]))
            await expectFailure(harness, .tooManyRedirects, attempts: 2) { _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "a")) }
        }
    }

    @Test func aPostRedirectedWithA303ToItsOwnURLGetsItNotALoop() async throws {
        // Post/Redirect/Get: the 303 asks for a GET of the URL the POST went to.
        try await Harness.run(configure: Self.quickRetries) { harness in
            harness.server.stub(.post, "/v1/users", MockResponse(status: .seeOther, headerFields: [.location: "/v1/users"]))
            harness.server.stub(.get, "/v1/users", .json(raw: #"{"at":"list"}"#))
            let value = try await harness.api.call(AdHocRequest<[String: String], [String: String]>(.create, "users", parameters: ["name": "a"]))
            #expect(value == ["at": "list"])
            #expect(harness.server.requests.map(\.method) == [.post, .get])
            // The same request twice is still a loop.
            harness.server.stub(.get, "/v1/self", MockResponse(status: .seeOther, headerFields: [.location: "/v1/self"]))
            await expectFailure(harness, .tooManyRedirects, attempts: 3) { _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "self")) }
        }
    }

    @Test func sameOriginRedirectKeepsTheCredential() async throws {
        try await Harness.run(configure: Self.quickRetries) { harness in
            harness.server.stub(.get, "/v1/old", MockResponse(status: .movedPermanently, headerFields: [.location: "/v1/new"]))
            harness.server.stub(.get, "/v1/new", .json(raw: #"{"at":"new"}"#))
            let value = try await harness.api.call(AdHocRequest<[String: String], Empty>(.show, "old"))
            #expect(value == ["at": "new"])
            #expect(harness.server.requests.map { $0.headerFields[.authorization] } == [Harness.token, Harness.token])
        }
    }

    @Test func crossOriginRedirectDropsTheCredential() async throws {
        try await Harness.run(configure: Self.quickRetries) { harness in
            try await MockServer.withRunning { other in
                other.stub(.get, "/landing", .json(raw: #"{"at":"other"}"#))
                let location = other.baseURL.absoluteString + "/landing"
                harness.server.stub(.get, "/v1/away", MockResponse(status: .temporaryRedirect, headerFields: [.location: location]))
                let value = try await harness.api.call(
                    AdHocRequest<[String: String], Empty>(.show, "away", headers: ["Cookie": "session=cookie-SECRET"])
                )
                #expect(value == ["at": "other"])
                #expect(harness.server.requests.first?.headerFields[.authorization] == Harness.token)
                let landed = try #require(other.requests.first)
                #expect(landed.headerFields[.authorization] == nil)
                #expect(landed.headerFields[.cookie] == nil)
                #expect(harness.logsAreFreeOfSecrets)
            }
        }
    }

    @Test func redirectAfterPOSTContinuesAsGETWithoutTheBody() async throws {
        try await Harness.run(configure: Self.quickRetries) { harness in
            harness.server.stub(.post, "/v1/forms", MockResponse(status: .seeOther, headerFields: [.location: "/v1/forms/1"]))
            harness.server.stub(.get, "/v1/forms/1", .json(raw: #"{"id":"1"}"#))
            _ = try await harness.api.call(AdHocRequest<[String: String], [String: String]>(.create, "forms", parameters: ["a": "b"]))
            #expect(harness.server.requests.map(\.method) == [.post, .get])
            #expect(harness.server.requests.last?.body.isEmpty == true)
        }
    }

    @Test func headerWithCRLFIsRefusedBeforeSending() async throws {
        try await Harness.run(configure: Self.quickRetries) { harness in
            await expectFailure(harness, .invalidRequest, attempts: 0) {
                _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x", headers: ["X-Note": "a\r\nX-Injected: yes"]))
            }
        }
    }

    @Test func dotDotPathValueStaysOneSegment() async throws {
        try await Harness.run(configure: Self.quickRetries) { harness in
            harness.server.stub(.get, "/v1/files/:name", .status(.noContent))
            _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "files/\("../../admin")"))
            #expect(harness.server.requests.first?.path == "/v1/files/..%2F..%2Fadmin")
        }
    }

    @Test func problemDetailsAreDecodedWhenTheRequestNamesNoErrorType() async throws {
        try await Harness.run(configure: Self.quickRetries) { harness in
            let problem = #"{"type":"https://example.com/out-of-credit","title":"Out of credit","status":403,"detail":"Balance is 30","balance":30}"#
            harness.server.stub(.get, "/v1/x", MockResponse(status: .forbidden, headerFields: [.contentType: "application/problem+json"], body: Data(problem.utf8)))
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x")) }
            #expect(error?.errorResponse(as: ProblemDetails.self) == ProblemDetails(
                type: "https://example.com/out-of-credit", title: "Out of credit", status: 403, detail: "Balance is 30"
            ))
            #expect(!(error.map { "\($0)" } ?? "").contains("Balance"))
        }
    }
}
