import Foundation
import HTTPTypes
import InMemoryLogging
import Logging
import Resourceful
import ResourcefulTesting
import Testing

/// The logging step honours the redaction switches in force at the transport: a step after it
/// that redacts a body keeps that body out of every line.
@Suite struct LoggingRedactionOrderTests {
    struct Person: Codable, Sendable, Equatable { var name: String }

    /// Redacts both bodies for the steps after it.
    static let redactBoth = ChangeOptions {
        $0.shouldRedactRequestBody = true
        $0.shouldRedactResponseBody = true
    }

    @Test func aSwitchSetAfterTheLoggingStepKeepsBothBodiesOutOfTheLog() async throws {
        try await Harness.run { harness in
            harness.server.stub(.post, "/v1/people", try .json(Person(name: "answer-s3cr3t")))
            let api = API(dependencies: harness.dependencies, middlewares: [LoggingMiddleware(), Self.redactBoth, RedirectMiddleware()])
            _ = try await api.call(AdHocRequest<Person, Person>(.create, "people", parameters: Person(name: "sent-s3cr3t")))
            #expect(harness.logs.entries.count == 2)
            #expect(!harness.logText.contains("s3cr3t"), "\(harness.logText)")
            let received = try #require(harness.logs.entries.first { $0.message.description == "Received response" })
            #expect(received.metadata["resourceful.request.body"]?.description.hasPrefix("<redacted") == true)
            #expect(received.metadata["resourceful.response.body"]?.description.hasPrefix("<redacted") == true)
        }
    }

    @Test func withoutTheSwitchTheRequestBodyIsWrittenWithTheAnswer() async throws {
        try await Harness.run { harness in
            harness.server.stub(.post, "/v1/people", try .json(Person(name: "Ada")))
            let api = API(dependencies: harness.dependencies, middlewares: [LoggingMiddleware(), RedirectMiddleware()])
            _ = try await api.call(AdHocRequest<Person, Person>(.create, "people", parameters: Person(name: "Grace")))
            let sending = try #require(harness.logs.entries.first { $0.message.description == "Sending request" })
            #expect(sending.metadata["resourceful.request.body"] == nil)
            let received = try #require(harness.logs.entries.first { $0.message.description == "Received response" })
            #expect(received.metadata["resourceful.request.body"]?.description.contains("Grace") == true)
            #expect(received.metadata["resourceful.response.body"]?.description.contains("Ada") == true)
        }
    }

    @Test func aRequestThatFailsWithoutAnAnswerShowsOnlyTheBodysSize() async throws {
        try await Harness.run(configure: { $0.retry.maxAttempts = 1 }) { harness in
            harness.server.stub(.post, "/v1/people", MockResponse(fault: .closeConnection))
            let api = API(dependencies: harness.dependencies, middlewares: [LoggingMiddleware(), Self.redactBoth, RedirectMiddleware()])
            _ = try? await api.call(AdHocRequest<Person, Person>(.create, "people", parameters: Person(name: "sent-s3cr3t")))
            #expect(!harness.logText.contains("s3cr3t"), "\(harness.logText)")
            let failed = try #require(harness.logs.entries.first { $0.message.description == "Request failed" })
            #expect(failed.metadata["resourceful.request.body"]?.description.hasPrefix("<redacted") == true)
        }
    }
}
