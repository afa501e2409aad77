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

    @Test func theDefaultFollowsTheMethodAndTheKey() {
        #expect(AdHocRequest<Empty, Empty>(.show, "x").allowsRetries)
        #expect(AdHocRequest<Empty, Empty>(.delete, "x").allowsRetries)
        #expect(AdHocRequest<Empty, [String: Int]>(.update, "x", parameters: ["a": 1]).allowsRetries)
        #expect(!AdHocRequest<Empty, [String: Int]>(.update, "x", parameters: ["a": 1], updateMethod: .patch).allowsRetries)
        #expect(!AdHocRequest<Empty, [String: Int]>(.create, "x", parameters: ["a": 1]).allowsRetries)
        #expect(AdHocRequest<Empty, [String: Int]>(.create, "x", parameters: ["a": 1], headers: ["idempotency-KEY": "k"]).allowsRetries)
    }
}
