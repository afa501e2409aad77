import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

/// `PATCH` is not idempotent (RFC 9110 §9.2.2): like a create, it is not sent again once the
/// server may have received it, unless it carries an `Idempotency-Key`. The server here reads the
/// whole request, then closes the connection without answering.
@Suite struct NonIdempotentRetryTests {
    private static let key = HTTPField.Name("Idempotency-Key")!

    private static func quickRetries(_ config: inout APIConfig) {
        config.retry = .init(maxAttempts: 3, baseDelay: .milliseconds(5), maxDelay: .milliseconds(20))
        config.http.connectTimeout = .seconds(5)
    }

    struct Rename: ResourceRequest {
        typealias ResourceType = Empty
        let verb = ResourceVerb.update
        let path: ResourcePath = "items/1"
        let parameters = ["name": "x"]
        var updateMethod: UpdateMethod = .patch
        var headers: [String: String] = [:]
        var retries: Bool?
        var allowsRetries: Bool { retries ?? (verb.method(update: updateMethod) == .put || headers["idempotency-key"] != nil) }
    }

    @Test func aPatchThatMayHaveBeenReceivedIsNotSentAgain() async throws {
        try await Harness.run(configure: Self.quickRetries) { harness in
            harness.server.stub(.patch, "/v1/items/1", .closeConnection, .closeConnection, .status(.noContent))
            // The request's own default, as the CLI's `update --patch` makes it.
            let error = await #expect(throws: APIError.self) {
                _ = try await harness.api.call(
                    AdHocRequest<Empty, [String: String]>(.update, "items/1", parameters: ["name": "x"], updateMethod: .patch))
            }
            #expect(error?.kind == .transport)
            #expect(harness.server.requests.count == 1)
            #expect(harness.server.requests.first?.headerFields[Self.key] == nil)
        }
    }

    @Test func aPutIsSentAgain() async throws {
        try await Harness.run(configure: Self.quickRetries) { harness in
            harness.server.stub(.put, "/v1/items/1", .closeConnection, .closeConnection, .status(.noContent))
            _ = try await harness.api.call(AdHocRequest<Empty, [String: String]>(.update, "items/1", parameters: ["name": "x"]))
            #expect(harness.server.requests.count == 3)
            #expect(harness.server.requests.allSatisfy { $0.headerFields[Self.key] == nil })
        }
    }

    @Test func aPatchWithItsOwnIdempotencyKeyIsSentAgainWithIt() async throws {
        try await Harness.run(configure: Self.quickRetries) { harness in
            harness.server.stub(.patch, "/v1/items/1", .closeConnection, .closeConnection, .status(.noContent))
            _ = try await harness.api.call(
                AdHocRequest<Empty, [String: String]>(
                    .update, "items/1", parameters: ["name": "x"], headers: ["Idempotency-Key": "rename-1"], updateMethod: .patch)
            )
            #expect(harness.server.requests.count == 3)
            #expect(harness.server.requests.allSatisfy { $0.headerFields[Self.key] == "rename-1" })
        }
    }

    @Test func aPatchThatOptsInIsSentAgainWithOneKeyOfItsOwn() async throws {
        try await Harness.run(configure: Self.quickRetries) { harness in
            harness.server.stub(.patch, "/v1/items/1", .closeConnection, .status(.serviceUnavailable), .status(.noContent))
            _ = try await harness.api.call(Rename(retries: true))
            let keys = harness.server.requests.map { $0.headerFields[Self.key] }
            #expect(keys.count == 3)
            #expect(keys.allSatisfy { $0 != nil && $0 == keys.first })
            #expect(harness.server.requests.allSatisfy { $0.method == .patch && $0.bodyText == #"{"name":"x"}"# })
        }
    }

    /// An event stream opened by a POST (a chat completion, say) that breaks is not opened again:
    /// that would send the POST again; a GET's is.
    @Test func aPostEventStreamThatBreaksIsNotSentAgain() async throws {
        struct Tick: Codable, Sendable, Equatable { var n: Int }
        func stream() -> MockResponse {
            let text = "id: 1\ndata: {\"n\":1}\n\ndata: {\"n\":"
            var response = MockResponse(headerFields: [.contentType: "text/event-stream"], fault: .closeMidBody(bytes: text.utf8.count))
            response.parts = [Data(text.utf8)]
            return response
        }
        try await Harness.run { harness in
            harness.server.stub(.post, "/v1/completions", stream(), stream(), .status(.noContent))
            let fast = EventStreamReconnection(maxAttempts: 3, delay: .milliseconds(10), maxDelay: .milliseconds(20))
            var received: [Int] = []
            let error = await #expect(throws: APIError.self) {
                for try await event in harness.api.events(
                    AdHocRequest<Tick, [String: String]>(.create, "completions", parameters: ["q": "x"]), reconnect: fast)
                {
                    received.append(event.data.n)
                }
            }
            #expect(error?.kind == .transport)
            #expect(received == [1])
            #expect(harness.server.requests.count == 1)

            harness.server.stub(.get, "/v1/ticks", stream(), .status(.noContent))
            for try await event in harness.api.events(AdHocRequest<Tick, Empty>(.show, "ticks"), reconnect: fast) {
                received.append(event.data.n)
            }
            #expect(harness.server.requests.count == 3)
        }
    }

    /// The method a call finally sends decides the default, a `PATCH` chosen in `configure` too:
    /// such a request is not sent again once the server may have received it, and no key is
    /// added to it.
    @Test func aPatchChosenInConfigureIsNotSentAgain() async throws {
        try await Harness.run(configure: Self.quickRetries) { harness in
            harness.server.stub(.patch, "/v1/items/1", .closeConnection, .closeConnection, .status(.noContent))
            var request = AdHocRequest<Empty, [String: String]>(.update, "items/1", parameters: ["name": "x"])
            request.configureOptions = { $0.updateMethod = .patch }
            #expect(harness.api.defaultOptions.applying(request).allowsRetries == false)
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(request) }
            #expect(error?.kind == .transport)
            #expect(harness.server.requests.count == 1)
            #expect(harness.server.requests.first?.method == .patch)
            #expect(harness.server.requests.first?.headerFields[Self.key] == nil)
        }
    }

    /// A choice made in `configure` holds whatever the method: opting in sends one key across
    /// the attempts; a `PUT` chosen there over the request's own `PATCH` is idempotent again.
    @Test func aChoiceInConfigureHoldsAndAPutChosenThereIsSentAgain() async throws {
        try await Harness.run(configure: Self.quickRetries) { harness in
            harness.server.stub(.patch, "/v1/items/1", .closeConnection, .closeConnection, .status(.noContent))
            var optedIn = AdHocRequest<Empty, [String: String]>(.update, "items/1", parameters: ["name": "x"])
            optedIn.configureOptions = { options in
                options.updateMethod = .patch
                options.allowsRetries = true
            }
            _ = try await harness.api.call(optedIn)
            let keys = harness.server.requests.map { $0.headerFields[Self.key] }
            #expect(keys.count == 3)
            #expect(keys.allSatisfy { $0 != nil && $0 == keys.first })

            harness.server.stub(.put, "/v1/items/2", .closeConnection, .status(.noContent))
            var put = AdHocRequest<Empty, [String: String]>(.update, "items/2", parameters: ["name": "x"], updateMethod: .patch)
            put.configureOptions = { $0.updateMethod = .put }
            _ = try await harness.api.call(put)
            #expect(harness.server.requests.count == 5)
            #expect(harness.server.requests.suffix(2).allSatisfy { $0.method == .put && $0.headerFields[Self.key] == nil })
        }
    }

    /// A request's own answer holds even when it equals the default for its own method: `Rename`
    /// says `true` for a `PUT` explicitly, so a `PATCH` chosen in `configure` is retried with a key.
    @Test func aRequestsOwnChoiceHoldsWhenConfigureChangesTheMethod() async throws {
        struct Chosen: ResourceRequest {
            typealias ResourceType = Empty
            let verb = ResourceVerb.update
            let path: ResourcePath = "items/1"
            let parameters = ["name": "x"]
            var allowsRetries: Bool { true }
            func configure(_ options: inout RequestOptions) { options.updateMethod = .patch }
        }
        try await Harness.run { harness in
            #expect(harness.api.defaultOptions.applying(Chosen()).allowsRetries)
        }
    }

    /// An event stream whose `PATCH` was chosen in `configure` is not opened again, nor is a
    /// download of one resumed.
    @Test func aStreamOrDownloadWhosePatchWasChosenInConfigureIsNotOpenedAgain() async throws {
        try await Harness.run { harness in
            let text = "data: one\n\ndata: tw"
            var cut = MockResponse(headerFields: [.contentType: "text/event-stream"], fault: .closeMidBody(bytes: text.utf8.count))
            cut.parts = [Data(text.utf8)]
            harness.server.stub(.patch, "/v1/feed", cut, cut, .status(.noContent))
            var request = AdHocRequest<String, [String: String]>(.update, "feed", parameters: ["q": "x"])
            request.configureOptions = { $0.updateMethod = .patch }
            var received: [String] = []
            let error = await #expect(throws: APIError.self) {
                let fast = EventStreamReconnection(maxAttempts: 3, delay: .milliseconds(10), maxDelay: .milliseconds(20))
                for try await event in harness.api.events(request, reconnect: fast) {
                    received.append(event.data)
                }
            }
            #expect(error?.kind == .transport)
            #expect(received == ["one"])
            #expect(harness.server.requests.count == 1)

            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-patch-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            var body = MockResponse(headerFields: [.eTag: "\"v1\"", .contentLength: "2000"], fault: .closeMidBody(bytes: 1000))
            body.parts = [Data(repeating: 0x61, count: 2000)]
            harness.server.stub(.patch, "/v1/asset", body, body, .status(.noContent))
            var download = AdHocRequest<Empty, [String: String]>(.update, "asset", parameters: ["q": "x"])
            download.configureOptions = { $0.updateMethod = .patch }
            let failed = await #expect(throws: APIError.self) {
                _ = try await harness.api.download(download, to: folder.appendingPathComponent("asset.bin"))
            }
            #expect(failed?.kind == .transport)
            #expect(harness.server.requests.count == 2)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        }
    }

    @Test func theDefaultFollowsTheMethodAndTheKey() {
        #expect(Self.allowsRetries(AdHocRequest<Empty, Empty>(.show, "x")))
        #expect(Self.allowsRetries(AdHocRequest<Empty, Empty>(.delete, "x")))
        #expect(Self.allowsRetries(AdHocRequest<Empty, [String: Int]>(.update, "x", parameters: ["a": 1])))
        #expect(!Self.allowsRetries(AdHocRequest<Empty, [String: Int]>(.update, "x", parameters: ["a": 1], updateMethod: .patch)))
        #expect(!Self.allowsRetries(AdHocRequest<Empty, [String: Int]>(.create, "x", parameters: ["a": 1])))
        #expect(Self.allowsRetries(AdHocRequest<Empty, [String: Int]>(.create, "x", parameters: ["a": 1], headers: ["idempotency-KEY": "k"])))
    }

    /// Whether a call of `request` may be tried again, as the options of a call decide it.
    private static func allowsRetries<Request: ResourceRequest>(_ request: Request) -> Bool {
        let config = APIConfig(baseURL: URL(string: "http://127.0.0.1")!, service: "retries")
        return RequestOptions(config: config, requestEncoder: JSONEncoder(), responseDecoder: JSONDecoder()).applying(request).allowsRetries
    }
}
