import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

/// The longest line of ``API/lines(_:)`` and the longest event of ``API/events(_:reconnect:)``
/// is ``RequestOptions/maxResponseBytes`` as the middlewares left it (``CallContext/options``),
/// not the call's own.
@Suite struct StreamLineCapTests {
    /// A JSON Lines body: a short line, a line that is one 4,998-character JSON string (5,000
    /// bytes with its quotes), a short line.
    static func lines(type: String = "application/x-ndjson") -> MockResponse {
        var response = MockResponse(headerFields: [.contentType: type])
        response.parts = [Data("\"a\"\n\"".utf8), Data(String(repeating: "b", count: 4_998).utf8), Data("\"\n\"c\"\n".utf8)]
        return response
    }

    static func events() -> MockResponse {
        var response = MockResponse(headerFields: [.contentType: "text/event-stream"])
        response.parts = [Data("data: \"a\"\n\ndata: \"".utf8), Data(String(repeating: "b", count: 4_998).utf8), Data("\"\n\ndata: \"c\"\n\n".utf8)]
        return response
    }

    static func api(_ harness: Harness, cap: Int) -> API {
        API(dependencies: harness.dependencies, middlewares: [ChangeOptions { $0.maxResponseBytes = cap }] + API.defaultMiddlewares)
    }

    @Test func aCapLoweredByAMiddlewareRefusesALongerLine() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/rows", Self.lines(), Self.lines())
            var read: [String] = []
            let error = await #expect(throws: APIError.self) {
                for try await value in Self.api(harness, cap: 1_000).lines(AdHocRequest<String, Empty>(.index, "rows")) { read.append(value) }
            }
            #expect(error?.kind == .responseTooLarge)
            #expect(error?.detail?.contains("1000 bytes") == true, "\(String(describing: error?.detail))")
            #expect(read == ["a"])
            // The same stream without the step is read whole.
            var whole: [String] = []
            for try await value in harness.api.lines(AdHocRequest<String, Empty>(.index, "rows")) { whole.append(value) }
            #expect(whole.map(\.count) == [1, 4_998, 1])
        }
    }

    @Test func aCapLoweredByAMiddlewareRefusesALongerRecordOfAJSONTextSequence() async throws {
        try await Harness.run { harness in
            var response = MockResponse(headerFields: [.contentType: "application/json-seq"])
            response.parts = [Data("\u{1E}\"a\"\n\u{1E}\"\(String(repeating: "b", count: 4_998))\"\n".utf8)]
            harness.server.stub(.get, "/v1/rows", response)
            let error = await #expect(throws: APIError.self) {
                for try await _ in Self.api(harness, cap: 1_000).lines(AdHocRequest<String, Empty>(.index, "rows")) {}
            }
            #expect(error?.kind == .responseTooLarge)
        }
    }

    @Test func aCapRaisedByAMiddlewareLetsALongerLineThrough() async throws {
        try await Harness.run(configure: { $0.maxResponseBytes = 1_000 }) { harness in
            harness.server.stub(.get, "/v1/rows", Self.lines(), Self.lines())
            var read: [String] = []
            for try await value in Self.api(harness, cap: 10_000).lines(AdHocRequest<String, Empty>(.index, "rows")) { read.append(value) }
            #expect(read.map(\.count) == [1, 4_998, 1])
            // The call's own cap refuses it.
            let error = await #expect(throws: APIError.self) {
                for try await _ in harness.api.lines(AdHocRequest<String, Empty>(.index, "rows")) {}
            }
            #expect(error?.kind == .responseTooLarge)
        }
    }

    @Test func aCapLoweredByAMiddlewareRefusesALongerEvent() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/ticks", Self.events(), Self.events())
            var read: [String] = []
            let error = await #expect(throws: APIError.self) {
                for try await event in Self.api(harness, cap: 1_000).events(AdHocRequest<String, Empty>(.show, "ticks"), reconnect: .never) {
                    read.append(event.data)
                }
            }
            #expect(error?.kind == .responseTooLarge)
            #expect(error?.detail?.contains("1000 bytes") == true, "\(String(describing: error?.detail))")
            // A `String` event takes the data as it is, quotes included.
            #expect(read == ["\"a\""])
            var whole: [String] = []
            for try await event in harness.api.events(AdHocRequest<String, Empty>(.show, "ticks"), reconnect: .never) { whole.append(event.data) }
            #expect(whole.map(\.count) == [3, 5_000, 3])
        }
    }

    @Test func aCapRaisedByAMiddlewareLetsALongerEventThrough() async throws {
        try await Harness.run(configure: { $0.maxResponseBytes = 1_000 }) { harness in
            harness.server.stub(.get, "/v1/ticks", Self.events())
            var read: [String] = []
            for try await event in Self.api(harness, cap: 10_000).events(AdHocRequest<String, Empty>(.show, "ticks"), reconnect: .never) {
                read.append(event.data)
            }
            #expect(read.map(\.count) == [3, 5_000, 3])
        }
    }
}
