import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

@Suite struct TransportTests {
    @Test func bodyOverTheCapFails() async throws {
        try await Harness.run(configure: { $0.maxResponseBytes = 1024 }) { harness in
            harness.server.stub(.get, "/v1/big", .json(raw: "[" + String(repeating: "1,", count: 2000) + "1]"))
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(AdHocRequest<[Int], Empty>(.show, "big")) }
            #expect(error?.kind == .responseTooLarge)
            #expect(error?.path == "big")
        }
    }

    @Test func bodyUnderTheCapIsCollected() async throws {
        try await Harness.run(configure: { $0.maxResponseBytes = 64 * 1024 }) { harness in
            harness.server.stub(.get, "/v1/numbers", try .json(Array(0..<5000)))
            let numbers = try await harness.api.call(AdHocRequest<[Int], Empty>(.show, "numbers"))
            #expect(numbers.count == 5000)
        }
    }

    @Test func slowServerTimesOutAtTheRequestsOwnLimit() async throws {
        try await Harness.run { harness in
            // The server would answer after a minute; the request's own limit is 200 ms. The bound
            // leaves a loaded machine room, and still tells the request's limit from the server's.
            harness.server.stub(.get, "/v1/slow", MockResponse.status(.noContent).delayed(by: .seconds(60)))
            let start = ContinuousClock.now
            let error = await #expect(throws: APIError.self) {
                _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "slow", timeout: .milliseconds(200)))
            }
            #expect(error?.kind == .timeout)
            #expect(ContinuousClock.now - start < .seconds(30))
        }
    }

    @Test func slowBodyTimesOutToo() async throws {
        try await Harness.run(configure: { $0.timeout = .milliseconds(300) }) { harness in
            var response = MockResponse.json(raw: #"{"id":1,"name":"late"}"#)
            response.bodyDelay = .seconds(5)
            harness.server.stub(.get, "/v1/users/1", response)
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(AdHocRequest<User, Empty>(.show, "users/1")) }
            #expect(error?.kind == .timeout)
        }
    }

    @Test func closedConnectionIsATransportError() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/gone", .closeConnection)
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "gone")) }
            #expect(error?.kind == .transport)
            #expect(error?.underlying != nil)
        }
    }

    @Test func refusedConnectionIsATransportError() async throws {
        let server = try await MockServer.start()
        let url = server.baseURL
        try await server.shutdown()
        try await AsyncHTTPClientTransport.withTransport(settings: .init(connectTimeout: .milliseconds(300))) { transport in
            let api = API(dependencies: APIDependencies(apiConfig: APIConfig(baseURL: url, service: "s"), transport: transport))
            let error = await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "x")) }
            #expect(error?.kind == .transport)
        }
    }

    @Test func cancellationStopsTheCall() async throws {
        // The server and the deadline would both end the call only after `slow`.
        let slow = Duration.seconds(600)
        try await Harness.run(configure: { $0.timeout = slow }) { harness in
            let arrived = Event()
            harness.server.route(.get, "/v1/slow") { _ in
                arrived.happen()
                return MockResponse.status(.noContent).delayed(by: slow)
            }
            let api = harness.api
            let task = Task { try await api.call(AdHocRequest<Empty, Empty>(.show, "slow")) }
            await arrived.wait()
            task.cancel()
            let start = ContinuousClock.now
            let result = await task.result
            // Ended by the cancellation: a minute leaves a loaded machine room, a tenth of `slow`.
            #expect(ContinuousClock.now - start < .seconds(60))
            #expect(throws: APIError.self) { try result.get() }
            #expect((try? result.get()) == nil)
            if case .failure(let error as APIError) = result { #expect(error.kind == .cancelled) }
        }
    }

    @Test(arguments: [("X-Evil", "a\r\nInjected: 1"), ("X-Evil", "first\nsecond"), ("Bad Name", "value-9f3"), ("", "value-9f3")])
    func headerWithCRLFOrBadNameIsRefusedBeforeSending(name: String, value: String) async throws {
        try await Harness.run { harness in
            let error = await #expect(throws: APIError.self) {
                _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x", headers: [name: value]))
            }
            #expect(error?.kind == .invalidRequest)
            #expect(!(error.map { "\($0)" } ?? "").contains(value))
            #expect(harness.server.requests.isEmpty)
        }
    }

    @Test func transportAfterShutdownFails() async throws {
        let transport = AsyncHTTPClientTransport()
        try await transport.shutdown()
        try await transport.shutdown()
        let request = TransportRequest(method: .get, url: "http://127.0.0.1:1/", deadline: .now + .seconds(1), maxResponseBytes: 10)
        let error = await #expect(throws: TransportError.self) { _ = try await transport.send(request) }
        #expect(error?.kind == .connectionFailed)
    }
}
