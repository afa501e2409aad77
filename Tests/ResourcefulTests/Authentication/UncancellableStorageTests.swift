import Dispatch
import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

/// Storages of an app's own that ignore cancellation: the call still ends at its deadline, or
/// as soon as its caller is cancelled, and the storage's late answer is dropped.
@Suite struct UncancellableStorageTests {
    /// Answers only when `release()` is called, whatever happens to the task that asked.
    final class Stuck: AuthenticationStorage, Sendable {
        let entered = Event()
        private let waiting = Locked<[CheckedContinuation<Void, Never>]>([])
        private let released = Locked(false)

        func authenticationHeader(for service: String) async throws -> String? {
            entered.happen()
            await withCheckedContinuation { continuation in
                let resumeNow = released.withLock { released in
                    if released { return true }
                    waiting.withLock { $0.append(continuation) }
                    return false
                }
                if resumeNow { continuation.resume() }
            }
            return "Bearer late-answer-7c1e"
        }

        /// Lets every waiting lookup return, so that nothing outlives the test.
        func release() {
            released.withLock { $0 = true }
            for continuation in waiting.withLock({ waiting in defer { waiting = [] }; return waiting }) {
                continuation.resume()
            }
        }

        /// Releases every waiting lookup after `delay`, on a thread of its own: a storage that
        /// blocks for a while without looking at cancellation.
        func release(after delay: Duration) {
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(delay.components.seconds) * 1_000_000_000)) {
                self.release()
            }
        }
    }

    /// A storage that never answers (`nil`), or that blocks far past the deadline: a call that
    /// waited for it would take that long, or for ever.
    @Test(arguments: [nil, 600] as [Int?])
    func aStorageThatIgnoresCancellationDoesNotHoldTheCallPastItsDeadline(answersAfterSeconds: Int?) async throws {
        let stuck = Stuck()
        if let answersAfterSeconds { stuck.release(after: .seconds(answersAfterSeconds)) }
        defer { stuck.release() }
        try await Harness.run { harness in
            harness.dependencies.authenticationStorage = stuck
            let timeout = Duration.seconds(1)
            harness.dependencies.apiConfig.timeout = timeout
            let start = ContinuousClock.now
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x")) }
            #expect(error?.kind == .timeout)
            // Only the deadline can have ended the call: a few times it and a minute for a loaded
            // machine to resume the call late, far less than the storage's wait.
            #expect(ContinuousClock.now - start < timeout * 8 + .seconds(60))
            #expect(harness.server.requests.isEmpty)
        }
    }

    @Test func cancellingTheCallerEndsAnUncancellableLookup() async throws {
        let stuck = Stuck()
        defer { stuck.release() }
        try await Harness.run { harness in
            harness.dependencies.authenticationStorage = stuck
            harness.dependencies.apiConfig.timeout = .seconds(600)
            let api = harness.api
            let call = Task { try await api.call(AdHocRequest<Empty, Empty>(.show, "x")) }
            await stuck.entered.wait()
            call.cancel()
            let result = await call.result
            guard case .failure(let error as APIError) = result else {
                Issue.record("expected an APIError, got \(result)")
                return
            }
            #expect(error.kind == .cancelled)
            #expect(harness.server.requests.isEmpty)
        }
    }

    @Test func aLateAnswerAfterTheDeadlineIsDroppedAndTheNextCallAsksAgain() async throws {
        let stuck = Stuck()
        defer { stuck.release() }
        try await Harness.run { harness in
            harness.dependencies.authenticationStorage = stuck
            harness.dependencies.apiConfig.timeout = .milliseconds(500)
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x")) }
            #expect(error?.kind == .timeout)
            stuck.release()
            // The answer the first lookup gives now reaches nobody; a new call gets its own.
            harness.server.stub(.get, "/v1/x", .status(.noContent))
            harness.dependencies.apiConfig.timeout = .seconds(30)
            _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x"))
            #expect(harness.server.requests.count == 1)
            #expect(harness.server.requests.first?.headerFields[.authorization] == "Bearer late-answer-7c1e")
        }
    }
}
