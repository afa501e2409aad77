import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Synchronization
import Testing

/// A refresh step shared by APIs whose storages hold different users' credentials sends each
/// call again only with a credential refreshed from the one it sent; a refresher that hangs or
/// fails does not stop later refreshes for longer than it must.
@Suite struct CredentialRefreshIsolationTests {
    /// Gives `Bearer <user>-new` for the user whose old credential it is told to renew next.
    final class PerUserRefresher: CredentialRefresher {
        let next = Locked<[String]>([])
        let count = Atomic<Int>(0)
        func refreshCredential(for service: String) async throws -> String {
            count.add(1, ordering: .relaxed)
            return next.withLock { $0.isEmpty ? "Bearer nobody" : $0.removeFirst() }
        }
    }

    /// Accepts only the `-new` credentials.
    private func acceptNew(_ server: MockServer) {
        server.route(.get, "/v1/me") { request in
            request.headerFields[.authorization]?.hasSuffix("-new") == true ? .status(.noContent) : .status(.unauthorized)
        }
    }

    @Test func anotherStoragesRefreshedCredentialIsNeverSent() async throws {
        try await Harness.run { harness in
            acceptNew(harness.server)
            let refresher = PerUserRefresher()
            let shared = API.defaultMiddlewares(refresher: refresher)
            var alice = harness.dependencies
            alice.authenticationStorage = InMemoryAuthenticationStorage([Harness.service: "Bearer alice-old"])
            var bob = harness.dependencies
            bob.authenticationStorage = InMemoryAuthenticationStorage([Harness.service: "Bearer bob-old"])

            refresher.next.withLock { $0 = ["Bearer alice-new"] }
            _ = try await API(dependencies: alice, middlewares: shared).call(AdHocRequest<Empty, Empty>(.show, "me"))
            refresher.next.withLock { $0 = ["Bearer bob-new"] }
            _ = try await API(dependencies: bob, middlewares: shared).call(AdHocRequest<Empty, Empty>(.show, "me"))

            let sent = harness.server.requests.compactMap { $0.headerFields[.authorization] }
            #expect(sent == ["Bearer alice-old", "Bearer alice-new", "Bearer bob-old", "Bearer bob-new"])
            #expect(refresher.count.load(ordering: .relaxed) == 2)
        }
    }

    @Test func aFailedRefreshBacksOffAndSaysSo() async throws {
        struct Broken: CredentialRefresher {
            struct Failure: Error {}
            func refreshCredential(for service: String) async throws -> String { throw Failure() }
        }
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/me", .status(.unauthorized))
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares(refresher: Broken()))
            let first = await #expect(throws: APIError.self) { try await api.call(AdHocRequest<Empty, Empty>(.show, "me")) }
            #expect(first?.kind == .authentication)
            let second = await #expect(throws: APIError.self) { try await api.call(AdHocRequest<Empty, Empty>(.show, "me")) }
            #expect(second?.kind == .authentication)
            #expect(second?.description.contains("failed less than") == true)
            #expect(second?.description.contains("refreshed less than") == false)
        }
    }

    /// A refresher that never returns and ignores cancellation.
    final class Stuck: CredentialRefresher {
        let calls = Atomic<Int>(0)
        let waiting = Locked<[CheckedContinuation<Void, Never>]>([])
        func refreshCredential(for service: String) async throws -> String {
            if calls.add(1, ordering: .relaxed).oldValue > 0 { return "Bearer good-new" }
            await withCheckedContinuation { continuation in waiting.withLock { $0.append(continuation) } }
            return "Bearer late-new"
        }
        func release() { for continuation in waiting.withLock({ $0 }) { continuation.resume() } }
    }

    @Test func aHungRefresherDoesNotStopRefreshing() async throws {
        let stuck = Stuck()
        defer { stuck.release() }
        try await Harness.run { harness in
            acceptNew(harness.server)
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares(refresher: stuck))
            // Long enough for the 401 and the refresh to start on a machine whose cores are busy
            // with other suites (or `stress-ng`): the call then waits all of it for the hung refresh.
            let timeout = Duration.seconds(25)
            let start = ContinuousClock.now
            let first = await #expect(throws: APIError.self) { try await api.call(AdHocRequest<Empty, Empty>(.show, "me", timeout: timeout)) }
            #expect(first?.kind == .timeout)
            #expect(ContinuousClock.now - start < timeout * 4)
            #expect(stuck.calls.load(ordering: .relaxed) == 1)
            // The hung refresh was abandoned at its deadline: this 401 starts another.
            _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "me", timeout: .seconds(60)))
            #expect(stuck.calls.load(ordering: .relaxed) == 2)
            #expect(harness.server.requests.last?.headerFields[.authorization] == "Bearer good-new")
        }
    }
}
