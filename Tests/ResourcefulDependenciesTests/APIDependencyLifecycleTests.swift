import Foundation
import HTTPTypes
import Resourceful
import ResourcefulDependencies
import ResourcefulServiceLifecycle
import ResourcefulTesting
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

/// A live transport that counts its shutdowns.
final class CountingTransport: HTTPTransport {
    let inner = AsyncHTTPClientTransport()
    let shutdowns = Locked(0)
    let finished = Locked(false)
    let delay: Duration

    init(delay: Duration = .zero) {
        self.delay = delay
    }

    func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        try await inner.send(request)
    }

    func shutdown() async throws {
        shutdowns.withLock { $0 += 1 }
        try await Task.sleep(for: delay)
        try await inner.shutdown()
        finished.withLock { $0 = true }
    }
}

@Suite
struct APIDependencyLifecycleTests {
    @Test("A ServiceGroup's graceful shutdown ends the live API once; nothing is sent after it")
    func gracefulShutdownEndsTheLiveAPIOnce() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/users/4", try .json(User(id: 4, name: "Alan")))
            let transport = CountingTransport()
            let config = APIConfig(baseURL: server.baseURL, service: "users")
            let api = APIDependency.live { API(dependencies: APIDependencies(apiConfig: config, transport: transport)) }
            try await testGracefulShutdown { trigger in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await APIService(shutdown: api.shutdown).run() }
                    #expect(try await api.call(ShowUser(id: 4)).name == "Alan")
                    trigger.triggerGracefulShutdown()
                    try await group.waitForAll()
                }
            }
            // The app's own end asks again: nothing more is shut down.
            try await api.shutdown()
            #expect(transport.shutdowns.withLock { $0 } == 1)
            let error = await #expect(throws: APIError.self) { try await api.call(ShowUser(id: 4)) }
            #expect(error?.kind == .cancelled)
            #expect(server.requests.count == 1)
            #expect(server.connectionCount == 1)
        }
    }

    @Test("A live API never made is not made to be shut down")
    func anUnmadeAPIIsNotMade() async throws {
        let made = Locked(0)
        let api = APIDependency.live {
            made.withLock { $0 += 1 }
            return API(dependencies: APIDependencies(apiConfig: APIDependency.placeholderConfig, transport: CountingTransport()))
        }
        try await api.shutdown()
        #expect(made.withLock { $0 } == 0)
        await #expect(throws: APIError.self) { try await api() }
        #expect(made.withLock { $0 } == 0)
    }
}
