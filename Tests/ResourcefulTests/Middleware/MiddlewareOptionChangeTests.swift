import Foundation
import HTTPTypes
import InMemoryLogging
import Logging
import Resourceful
import ResourcefulTesting
import Testing

/// A middleware's change to ``CallContext/options`` reaches every step after it and the
/// transport, for each setting the request carries: time-out, byte cap, redaction switches.
@Suite struct MiddlewareOptionChangeTests {
    /// Only an option that changed is written again: a field a step set on the request itself
    /// (a tighter deadline) stays until the option behind it changes.
    @Test func onlyTheSettingsThatChangedAreWrittenAgain() {
        let config = APIConfig(baseURL: URL(string: "https://api.example.com")!, service: "svc")
        let options = RequestOptions(config: config, requestEncoder: JSONEncoder(), responseDecoder: JSONDecoder())
        let start = ContinuousClock.now
        var context = CallContext(
            requestID: "0123456789abcdef", verb: .show, target: RequestTarget(origin: "https://api.example.com", path: "x"),
            pathTemplate: "x", options: options, logger: Logger(label: "test"), start: start
        )
        var request = TransportRequest(
            method: .get, url: "https://api.example.com/x", deadline: start + options.timeout, maxResponseBytes: options.maxResponseBytes)
        #expect(!context.hasUnappliedOptions)
        request.deadline = start + .seconds(2)
        context.options.maxResponseBytes = 100
        context.options.shouldRedactResponseBody = true
        #expect(context.hasUnappliedOptions)
        context.applyOptions(to: &request)
        #expect(!context.hasUnappliedOptions)
        #expect(request.maxResponseBytes == 100)
        #expect(request.shouldRedactResponseBody)
        #expect(!request.shouldRedactRequestBody)
        #expect(request.deadline == start + .seconds(2))
        context.options.timeout = .seconds(5)
        context.applyOptions(to: &request)
        #expect(request.deadline == start + .seconds(5))
    }

    @Test func aByteCapSetByAMiddlewareRefusesALargerAnswer() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/big", .json(raw: "\"" + String(repeating: "a", count: 4_998) + "\""))
            let api = API(dependencies: harness.dependencies, middlewares: [ChangeOptions { $0.maxResponseBytes = 100 }] + API.defaultMiddlewares)
            let error = await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<String, Empty>(.show, "big")) }
            #expect(error?.kind == .responseTooLarge)
            // The same call without the step gets the whole answer.
            let whole = try await harness.api.call(AdHocRequest<String, Empty>(.show, "big"))
            #expect(whole.count == 4_998)
        }
    }

    @Test func aCapRaisedByAMiddlewareLetsALargerAnswerThrough() async throws {
        try await Harness.run(configure: { $0.maxResponseBytes = 100 }) { harness in
            harness.server.stub(.get, "/v1/big", .json(raw: "\"" + String(repeating: "a", count: 4_998) + "\""))
            let api = API(
                dependencies: harness.dependencies, middlewares: [ChangeOptions { $0.maxResponseBytes = 10_000 }] + API.defaultMiddlewares)
            let whole = try await api.call(AdHocRequest<String, Empty>(.show, "big"))
            #expect(whole.count == 4_998)
            await #expect(throws: APIError.self) { _ = try await harness.api.call(AdHocRequest<String, Empty>(.show, "big")) }
        }
    }

    @Test func aTimeOutSetByAMiddlewareEndsTheCallAtItsDeadline() async throws {
        // The answer comes after a minute and the call's own time-out is two: only the step's
        // second can end the call within the bound below, however loaded the machine.
        try await Harness.run(configure: { $0.timeout = .seconds(120) }) { harness in
            harness.server.stub(.get, "/v1/slow", MockResponse.status(.noContent).delayed(by: .seconds(60)))
            let timeout = Duration.seconds(1)
            let api = API(dependencies: harness.dependencies, middlewares: [ChangeOptions { $0.timeout = timeout }] + API.defaultMiddlewares)
            let start = ContinuousClock.now
            let error = await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "slow")) }
            let elapsed = ContinuousClock.now - start
            #expect(error?.kind == .timeout)
            // Over at the deadline the step set, long before the answer would have come.
            #expect(elapsed >= timeout - .milliseconds(50), "\(elapsed)")
            #expect(elapsed < .seconds(30), "\(elapsed)")
        }
    }

    @Test func aStreamTimeOutSetByAMiddlewareEndsTheStreamAtItsDeadline() async throws {
        // The body takes a minute and the call's own time-out is two.
        try await Harness.run(configure: { $0.timeout = .seconds(120) }) { harness in
            var drip = MockResponse(headerFields: [.contentType: "application/octet-stream"])
            drip.parts = Array(repeating: Data(repeating: 0x61, count: 10), count: 120)
            drip.partDelay = .milliseconds(500)
            harness.server.stub(.get, "/v1/drip", drip)
            let streamTimeout = Duration.seconds(1)
            let api = API(
                dependencies: harness.dependencies, middlewares: [ChangeOptions { $0.streamTimeout = streamTimeout }] + API.defaultMiddlewares)
            let start = ContinuousClock.now
            let error = await #expect(throws: APIError.self) {
                let response = try await api.stream(AdHocRequest<Empty, Empty>(.show, "drip"))
                for try await _ in response.body {}
            }
            let elapsed = ContinuousClock.now - start
            #expect(error?.kind == .timeout)
            // Over at the deadline the step set, long before the minute the whole body takes.
            #expect(elapsed >= streamTimeout - .milliseconds(50), "\(elapsed)")
            #expect(elapsed < .seconds(30), "\(elapsed)")
        }
    }

    @Test func redactionTurnedOnByAMiddlewareKeepsBodiesOutOfLogsAndRecordings() async throws {
        let marker = "body-marker-\(UInt32.random(in: 0...UInt32.max))"
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-\(UUID().uuidString).har")
        defer { try? FileManager.default.removeItem(at: file) }
        try await Harness.run { harness in
            harness.server.stub(.post, "/v1/notes", .json(raw: #"{"text":"\#(marker)"}"#))
            var dependencies = harness.dependencies
            dependencies.transport = try RecordingTransport(dependencies.transport, file: file, masking: dependencies.apiConfig.redaction)
            let redact = ChangeOptions {
                $0.shouldRedactRequestBody = true
                $0.shouldRedactResponseBody = true
            }
            let api = API(dependencies: dependencies, middlewares: [redact] + API.defaultMiddlewares)
            let value = try await api.call(AdHocRequest<[String: String], [String: String]>(.create, "notes", parameters: ["text": marker]))
            #expect(value == ["text": marker])
            #expect(harness.server.requests.first?.bodyText.contains(marker) == true)
            #expect(harness.logs.entries.contains { $0.message.description == "Sending request" })
            #expect(!harness.logText.contains(marker))
            let recorded = try String(contentsOf: file, encoding: .utf8)
            #expect(recorded.contains("/v1/notes"))
            #expect(!recorded.contains(marker))
        }
    }
}
