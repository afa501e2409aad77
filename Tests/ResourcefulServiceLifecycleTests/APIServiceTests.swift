import Foundation
import HTTPTypes
import Logging
import Resourceful
import ResourcefulServiceLifecycle
import ResourcefulTesting
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

@Suite struct APIServiceTests {
    @Test func gracefulShutdownShutsTheClientDown() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/ping", .status(.noContent))
            let api = API(dependencies: APIDependencies(apiConfig: APIConfig(baseURL: server.baseURL, service: "s"), transport: AsyncHTTPClientTransport()))
            try await testGracefulShutdown { trigger in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await APIService(api: api).run() }
                    _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "ping"))
                    trigger.triggerGracefulShutdown()
                    try await group.waitForAll()
                }
            }
            let error = await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "ping")) }
            #expect(error?.kind == .transport)
            #expect(server.requests.count == 1)
        }
    }

    @Test func runsInAServiceGroupUntilItStops() async throws {
        let api = API(dependencies: APIDependencies(apiConfig: APIConfig(baseURL: URL(string: "http://127.0.0.1:1")!, service: "s"), transport: AsyncHTTPClientTransport()))
        let group = ServiceGroup(configuration: .init(services: [.init(service: APIService(api: api))], logger: .init(label: "test")))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        let error = await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "x")) }
        #expect(error?.kind == .transport)
    }
}
