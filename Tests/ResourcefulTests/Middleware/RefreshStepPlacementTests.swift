import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Synchronization
import Testing

/// The refresh step is where the middleware list puts it: `API.defaultMiddlewares` holds one after
/// the retries, bound to the API's storage when that storage renews its own credentials; a list
/// without one refreshes nothing.
@Suite struct RefreshStepPlacementTests {
    /// A storage that renews its own credential, as an OAuth 2 storage does: `Bearer fresh` once
    /// refreshed.
    final class RenewingStorage: AuthenticationStorage, CredentialRefresher {
        let header = Locked("Bearer stale")
        let refreshes = Atomic<Int>(0)

        func authenticationHeader(for service: String) async throws -> String? { header.withLock { $0 } }

        func refreshCredential(for service: String) async throws -> String {
            refreshes.add(1, ordering: .relaxed)
            header.withLock { $0 = "Bearer fresh" }
            return "Bearer fresh"
        }
    }

    static func call(_ server: MockServer, _ transport: AsyncHTTPClientTransport, storage: RenewingStorage, middlewares: [any APIMiddleware]) async -> APIError? {
        let config = APIConfig(baseURL: server.baseURL.appendingPathComponent("v1"), service: "s")
        let api = API(dependencies: APIDependencies(apiConfig: config, authenticationStorage: storage, transport: transport), middlewares: middlewares)
        do {
            _ = try await api.call(AdHocRequest<[String: String], Empty>(.show, "me"))
            return nil
        } catch {
            return error
        }
    }

    @Test func theDefaultListRefreshesAStorageThatRenewsItselfAndAListWithoutTheStepDoesNot() async throws {
        try await MockServer.withRunning { server in
            server.route(.get, "/v1/me") { request in
                request.headerFields[.authorization] == "Bearer fresh" ? .json(raw: #"{"me":"ok"}"#) : .status(.unauthorized)
            }
            try await AsyncHTTPClientTransport.withTransport { transport in
                let defaults = RenewingStorage()
                #expect(await Self.call(server, transport, storage: defaults, middlewares: API.defaultMiddlewares) == nil)
                #expect(defaults.refreshes.load(ordering: .relaxed) == 1)

                let without = RenewingStorage()
                let refused = await Self.call(server, transport, storage: without, middlewares: [RetryMiddleware(), LoggingMiddleware()])
                #expect(refused?.kind == .unauthorized)
                #expect(without.refreshes.load(ordering: .relaxed) == 0)

                let placed = RenewingStorage()
                #expect(await Self.call(server, transport, storage: placed, middlewares: [RetryMiddleware(), CredentialRefreshMiddleware()]) == nil)
                #expect(placed.refreshes.load(ordering: .relaxed) == 1)
            }
        }
    }

    @Test func anUnboundStepPassesA401ThroughWithAStorageThatCannotRenew() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/me", .status(.unauthorized))
            try await AsyncHTTPClientTransport.withTransport { transport in
                let config = APIConfig(baseURL: server.baseURL.appendingPathComponent("v1"), service: "s")
                let storage = InMemoryAuthenticationStorage()
                storage.setAuthenticationHeader("Bearer plain", for: "s")
                let api = API(dependencies: APIDependencies(apiConfig: config, authenticationStorage: storage, transport: transport))
                let error = await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "me")) }
                #expect(error?.kind == .unauthorized && error?.stage == .validatingResponse)
                #expect(server.requests.count == 1)
            }
        }
    }
}
