import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Synchronization
import Testing

@Suite struct CredentialRefreshTests {
    /// Writes a new token to the storage on each refresh, counting them.
    final class CountingRefresher: CredentialRefresher {
        let storage: InMemoryAuthenticationStorage
        let refreshes = Atomic<Int>(0)
        let fails: Bool

        init(storage: InMemoryAuthenticationStorage, fails: Bool = false) {
            self.storage = storage
            self.fails = fails
        }

        struct RefreshFailed: Error {}

        func refreshCredential(for service: String) async throws -> String {
            let count = refreshes.add(1, ordering: .relaxed).newValue
            // A slow refresh, so that concurrent 401s arrive while it runs (not a wait for readiness).
            try await Task.sleep(for: .milliseconds(50))
            if fails { throw RefreshFailed() }
            let header = "Bearer fresh-\(count)"
            storage.setAuthenticationHeader(header, for: service)
            return header
        }
    }

    /// 401 unless the request carries `Bearer fresh-<n>`.
    private func requireFreshToken(_ server: MockServer) {
        server.route(.get, "/v1/me") { request in
            guard request.headerFields[.authorization]?.hasPrefix("Bearer fresh-") == true else { return .status(.unauthorized) }
            return .json(raw: #"{"me":"ok"}"#)
        }
    }

    @Test func hundredConcurrent401sCauseOneRefresh() async throws {
        try await Harness.run(authorization: "Bearer expired") { harness in
            requireFreshToken(harness.server)
            let storage = InMemoryAuthenticationStorage([Harness.service: "Bearer expired"])
            harness.dependencies.authenticationStorage = storage
            let refresher = CountingRefresher(storage: storage)
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares(refresher: refresher))
            let results = try await withThrowingTaskGroup(of: [String: String].self) { group in
                for _ in 0..<100 { group.addTask { try await api.call(AdHocRequest<[String: String], Empty>(.show, "me")) } }
                var all: [[String: String]] = []
                for try await value in group { all.append(value) }
                return all
            }
            #expect(results.count == 100)
            #expect(results.allSatisfy { $0 == ["me": "ok"] })
            #expect(refresher.refreshes.load(ordering: .relaxed) == 1)
            let replays = harness.server.requests.filter { $0.headerFields[.authorization] == "Bearer fresh-1" }
            #expect(replays.count == 100)
            #expect(harness.server.requests.count == 200)
            #expect(!harness.logText.contains("fresh-1"))
            _ = try await api.call(AdHocRequest<[String: String], Empty>(.show, "me"))
            #expect(refresher.refreshes.load(ordering: .relaxed) == 1)
        }
    }

    @Test func aSecond401IsUnauthorized() async throws {
        try await Harness.run(authorization: "Bearer expired") { harness in
            harness.server.stub(.get, "/v1/me", .status(.unauthorized))
            let storage = InMemoryAuthenticationStorage([Harness.service: "Bearer expired"])
            harness.dependencies.authenticationStorage = storage
            let refresher = CountingRefresher(storage: storage)
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares(refresher: refresher))
            let error = await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "me")) }
            #expect(error?.kind == .unauthorized)
            #expect(error?.status == .unauthorized)
            #expect(harness.server.requests.count == 2)
            #expect(refresher.refreshes.load(ordering: .relaxed) == 1)
        }
    }

    @Test func aFailingRefreshIsAnAuthenticationError() async throws {
        try await Harness.run(authorization: "Bearer expired") { harness in
            harness.server.stub(.get, "/v1/me", .status(.unauthorized))
            let refresher = CountingRefresher(storage: InMemoryAuthenticationStorage(), fails: true)
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares(refresher: refresher))
            let error = await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "me")) }
            #expect(error?.kind == .authentication)
            #expect(error?.underlying is CountingRefresher.RefreshFailed)
            #expect(harness.server.requests.count == 1)
        }
    }

    @Test func withoutARefresherA401IsUnauthorized() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/me", .status(.unauthorized))
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "me")) }
            #expect(error?.kind == .unauthorized)
            #expect(harness.server.requests.count == 1)
        }
    }

    @Test func theRefreshCountsAgainstTheDeadline() async throws {
        /// A refresh that takes far longer than the call may.
        struct SlowRefresher: CredentialRefresher {
            static let duration = Duration.seconds(600)
            func refreshCredential(for service: String) async throws -> String {
                try await Task.sleep(for: Self.duration)
                return "Bearer late"
            }
        }
        let deadline = Duration.milliseconds(300)
        try await Harness.run(configure: { $0.timeout = deadline }) { harness in
            harness.server.stub(.get, "/v1/me", .status(.unauthorized))
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares(refresher: SlowRefresher()))
            let start = ContinuousClock.now
            let error = await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "me")) }
            #expect(error?.kind == .timeout)
            // Ended at the deadline, not at the refresh's end: a few times the deadline and a
            // minute for a loaded machine, a tenth of the refresh.
            #expect(ContinuousClock.now - start < deadline * 10 + .seconds(60))
        }
    }
}
