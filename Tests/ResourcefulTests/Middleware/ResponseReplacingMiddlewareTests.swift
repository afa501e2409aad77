import Foundation
import HTTPTypes
import NIOCore
import ResourcefulTesting
import Testing

@testable import Resourceful

/// A user's step that replaces the response (a body transform) or answers itself (its own
/// cache, a stub) keeps the contract: a redaction switch or byte cap set by an earlier step
/// still holds for what it returns; and a cache hit keeps a redaction switch set by a step after
/// the cache when the answer was stored.
@Suite struct ResponseReplacingMiddlewareTests {
    static let secret = "S-REPLACED-7731"

    /// Builds a new response from what the steps after it answered.
    struct Rebuild: APIMiddleware {
        func intercept(
            _ request: TransportRequest, context: CallContext,
            next: (TransportRequest, CallContext) async throws -> TransportResponse
        ) async throws -> TransportResponse {
            let response = try await next(request, context)
            return TransportResponse(status: response.status, headerFields: response.headerFields, body: response.body)
        }
    }

    /// Answers itself, without the network.
    struct Answer: APIMiddleware {
        func intercept(
            _ request: TransportRequest, context: CallContext,
            next: (TransportRequest, CallContext) async throws -> TransportResponse
        ) async throws -> TransportResponse {
            var fields = HTTPFields()
            fields[.contentType] = "application/json"
            let body = #"{"note":"\#(ResponseReplacingMiddlewareTests.secret)","pad":"\#(String(repeating: "x", count: 5000))"}"#
            return TransportResponse(status: .ok, headerFields: fields, body: ByteBuffer(string: body))
        }
    }

    static let redact = ChangeOptions { $0.shouldRedactResponseBody = true }
    static let cap = ChangeOptions { $0.maxResponseBytes = 100 }

    @Test(arguments: ["rebuild", "answer"])
    func aRedactionSwitchBeforeAStepThatReplacesTheResponseHolds(kind: String) async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/items", .json(raw: #"{"note":"\#(Self.secret)"}"#))
            let own: any APIMiddleware = kind == "rebuild" ? Rebuild() : Answer()
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [Self.redact, own])
            _ = try await api.call(AdHocRequest<[String: String], Empty>(.show, "items", parameters: Empty()))
            #expect(harness.logText.contains("<redacted,"), "\(harness.logText)")
            #expect(!harness.logText.contains(Self.secret), "\(harness.logText)")
        }
    }

    @Test func aByteCapBeforeAStepThatAnswersItselfHolds() async throws {
        try await Harness.run { harness in
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [Self.cap, Answer()])
            let error = await #expect(throws: APIError.self) {
                _ = try await api.call(AdHocRequest<[String: String], Empty>(.show, "items", parameters: Empty()))
            }
            #expect(error?.kind == .responseTooLarge)
        }
    }

    @Test func aStepThatAnswersItselfWithoutSwitchesIsLoggedAsBefore() async throws {
        try await Harness.run { harness in
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [Answer()])
            _ = try await api.call(AdHocRequest<[String: String], Empty>(.show, "items", parameters: Empty()))
            #expect(harness.logText.contains(Self.secret))
        }
    }
}
