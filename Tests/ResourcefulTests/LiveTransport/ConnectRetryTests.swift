import Foundation
@testable import Resourceful
import Synchronization
import Testing

/// The connect-retry loop on its own: which failures it tries again, its waits, and its two
/// bounds (the budget and the request's deadline).
@Suite struct ConnectRetryTests {
    struct Refusal: Error {}
    struct Other: Error {}

    /// A refusal as the transport reports one to the loop.
    static var refused: ConnectRetry.NotSent { ConnectRetry.NotSent(reason: .refused, cause: Refusal()) }

    @Test func waitsAreJitteredBetweenHalfAndAllOfTheirStep() {
        for step in [ConnectRetry.firstWait, .milliseconds(100), ConnectRetry.longestWait] {
            for _ in 0..<200 {
                let wait = ConnectRetry.jittered(step)
                #expect(wait >= step / 2 && wait <= step)
            }
        }
    }

    @Test func triesAgainUntilTheConnectionIsMade() async throws {
        let attempts = Atomic<Int>(0)
        let answer = try await ConnectRetry(budget: .seconds(30)).run(target: "h:1", deadline: .now + .seconds(60)) {
            if attempts.add(1, ordering: .relaxed).newValue < 4 { throw Self.refused }
            return "made"
        }
        #expect(answer == "made")
        #expect(attempts.load(ordering: .relaxed) == 4)
    }

    @Test func anyOtherFailureIsNotTriedAgain() async throws {
        let attempts = Atomic<Int>(0)
        let error = await #expect(throws: TransportError.self) {
            _ = try await ConnectRetry(budget: .seconds(30)).run(target: "h:1", deadline: .now + .seconds(60)) { () throws -> Int in
                attempts.add(1, ordering: .relaxed)
                throw Other()
            }
        }
        #expect(attempts.load(ordering: .relaxed) == 1)
        // Thrown as the transport reports it, over the error, and not for the policy to retry.
        #expect(error?.underlying is Other)
        #expect(error?.apiError.mayRetry == false)
    }

    @Test func endsAtTheBudgetNamingTheTargetAndTheAttempts() async throws {
        let budget = Duration.milliseconds(800)
        let start = ContinuousClock.now
        let error = await #expect(throws: TransportError.self) {
            _ = try await ConnectRetry(budget: budget).run(target: "example.com:443", deadline: .now + .seconds(60)) { () throws -> Int in
                throw Self.refused
            }
        }
        let elapsed = ContinuousClock.now - start
        let failure = try #require(error?.apiError)
        #expect(failure.kind == .transport)
        #expect(failure.mayRetry == false)
        let description = failure.description
        #expect(description.contains("the connection to example.com:443 was refused"), "\(description)")
        #expect((ConnectFailure.attempts(description) ?? 0) > 1, "\(description)")
        // Waits are never started past the budget.
        #expect(elapsed >= budget / 2)
        #expect(elapsed < .seconds(30))
    }

    @Test func aDeadlineBeforeTheBudgetEndsItFirst() async throws {
        let deadline = ContinuousClock.now + .milliseconds(400)
        await #expect(throws: TransportError.self) {
            _ = try await ConnectRetry(budget: .seconds(600)).run(target: "h:1", deadline: deadline) { () throws -> Int in
                throw Self.refused
            }
        }
        // No wait was started that would pass the deadline.
        #expect(ContinuousClock.now < deadline + .seconds(30))
        #expect(ContinuousClock.now >= deadline - ConnectRetry.longestWait)
    }

    @Test func aConnectTimeOutMayStillBeRetriedByThePolicy() {
        let timedOut = ConnectionNotMade(target: "h:1", attempts: 1, reason: .connectTimedOut, cause: Other())
        let refused = ConnectionNotMade(target: "h:1", attempts: 3, reason: .refused, cause: Refusal())
        #expect(TransportError(.connectionFailed, underlying: timedOut).apiError.mayRetry)
        #expect(!TransportError(.connectionFailed, underlying: refused).apiError.mayRetry)
    }

    @Test func cancellationEndsTheWaits() async throws {
        let task = Task {
            try await ConnectRetry(budget: .seconds(600)).run(target: "h:1", deadline: .now + .seconds(600)) { () throws -> Int in
                throw Self.refused
            }
        }
        task.cancel()
        let error = await #expect(throws: TransportError.self) { _ = try await task.value }
        #expect(error?.apiError.kind == .cancelled)
    }

    @Test func aHostNameThatCannotBeResolvedIsSaidSo() async {
        // `.invalid` is never a host (RFC 6761): the resolver answers at once, network or not.
        let error = await liveCall("http://no-such-host.invalid/v1")
        #expect(error?.kind == .transport && error?.stage == .transport)
        #expect(error?.detail == "the host name no-such-host.invalid could not be resolved", "\(String(describing: error))")
    }
}
