import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Synchronization
import Testing

/// Refreshes that are cancelled, abandoned or keep being refused leave no state behind that
/// breaks later calls.
@Suite struct CredentialRefreshEdgeTests {
    /// Refreshes as `outcomes` say, one per refresh, counting them; the last outcome repeats.
    final class ScriptedRefresher: CredentialRefresher {
        enum Outcome: Sendable { case cancel, token(String), hang }
        let outcomes: [Outcome]
        let count = Atomic<Int>(0)
        /// Ends a `.hang` refresh when the test says so.
        let (release, releaser) = AsyncStream<Void>.makeStream()

        init(_ outcomes: [Outcome]) { self.outcomes = outcomes }

        func refreshCredential(for service: String) async throws -> String {
            let index = count.add(1, ordering: .relaxed).oldValue
            switch outcomes[min(index, outcomes.count - 1)] {
            case .cancel: throw CancellationError()
            case .token(let token): return token
            case .hang:
                // Until the test releases it (after the waiting call gave up); then it answers.
                for await _ in release { break }
                return "Bearer late"
            }
        }
    }

    private func api(_ harness: Harness, _ refresher: ScriptedRefresher, interval: Duration) -> API {
        API(dependencies: harness.dependencies, middlewares: [RetryMiddleware(), CredentialRefreshMiddleware(refresher: refresher, minimumInterval: interval), LoggingMiddleware()])
    }

    private func acceptOnly(_ token: String, on server: MockServer) {
        server.route(.get, "/v1/me") { request in
            request.headerFields[.authorization] == token ? .status(.noContent) : .status(.unauthorized)
        }
    }

    @Test func aRefresherThatThrowsCancellationDoesNotBreakLaterRefreshes() async throws {
        try await Harness.run { harness in
            acceptOnly("Bearer good", on: harness.server)
            let refresher = ScriptedRefresher([.cancel, .token("Bearer good")])
            let api = api(harness, refresher, interval: .zero)
            let first = await #expect(throws: APIError.self) { try await api.call(AdHocRequest<Empty, Empty>(.show, "me")) }
            #expect(first?.kind == .authentication)
            _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "me"))
            #expect(refresher.count.load(ordering: .relaxed) == 2)
        }
    }

    @Test func aRefreshPastItsDeadlineIsAbandonedAndTheNextCallStartsAnother() async throws {
        try await Harness.run { harness in
            acceptOnly("Bearer good", on: harness.server)
            let refresher = ScriptedRefresher([.hang, .token("Bearer good")])
            let middleware = CredentialRefreshMiddleware(refresher: refresher, minimumInterval: .seconds(60))
            let api = API(dependencies: harness.dependencies, middlewares: [middleware])
            // Long enough for the 401 and the refresh to start on a machine whose cores are busy
            // with other suites (or `stress-ng`): the call then waits all of it for the hung refresh.
            let impatient = AdHocRequest<Empty, Empty>(.show, "me", timeout: .seconds(25))
            let error = await #expect(throws: APIError.self) { try await api.call(impatient) }
            #expect(error?.kind == .timeout)
            #expect(refresher.count.load(ordering: .relaxed) == 1)
            // The next 401 does not wait for the abandoned refresh: it starts its own.
            _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "me", timeout: .seconds(60)))
            #expect(refresher.count.load(ordering: .relaxed) == 2)
            // The abandoned refresh answering late changes nothing.
            refresher.releaser.yield()
            _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "me"))
            #expect(!harness.server.requests.contains { $0.headerFields[.authorization] == "Bearer late" })
        }
    }

    @Test func aCancelledRefreshStartsNoCoolDown() async throws {
        try await Harness.run { harness in
            acceptOnly("Bearer good", on: harness.server)
            let refresher = ScriptedRefresher([.cancel, .token("Bearer good")])
            let api = api(harness, refresher, interval: .seconds(60))
            let first = await #expect(throws: APIError.self) { try await api.call(AdHocRequest<Empty, Empty>(.show, "me")) }
            #expect(first?.kind == .authentication)
            #expect(first?.description.contains("cancelled") == true)
            // No credential was refreshed: the next call refreshes at once, within the interval.
            _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "me"))
            #expect(refresher.count.load(ordering: .relaxed) == 2)
        }
    }

    @Test func aServerThatKeepsRefusingCausesOneRefreshPerInterval() async throws {
        try await Harness.run { harness in
            acceptOnly("Bearer nothing-works", on: harness.server)
            // The storage already holds what the refresher gives: the server refuses fresh credentials.
            harness.dependencies.authenticationStorage = InMemoryAuthenticationStorage([Harness.service: "Bearer fresh"])
            let refresher = ScriptedRefresher([.token("Bearer fresh")])
            let api = api(harness, refresher, interval: .seconds(60))
            for _ in 0..<10 {
                let error = await #expect(throws: APIError.self) { try await api.call(AdHocRequest<Empty, Empty>(.show, "me")) }
                #expect(error?.kind == .unauthorized)
            }
            #expect(refresher.count.load(ordering: .relaxed) == 1)
            #expect(harness.logsAreFreeOfSecrets)
        }
    }
}
