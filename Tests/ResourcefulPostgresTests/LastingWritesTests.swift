import Resourceful
import Testing

@testable import ResourcefulPostgres

/// What a shared state's shutdown waits for: writes under way, and writes still to come.
struct LastingWritesTests {
    @Test("finished() waits for a write under way, which the caller's cancellation does not end")
    func aWriteUnderWayIsWaitedFor() async throws {
        let writes = LastingWrites()
        let (gate, open) = AsyncStream<Void>.makeStream()
        let caller = Task { try await writes.run { for await _ in gate { break }; return 7 } }
        try await waitUntil { writes.count == 1 }
        caller.cancel()
        let finished = Task { await writes.finished(); return ContinuousClock.now }
        let opened = ContinuousClock.now
        open.yield()
        #expect(await finished.value >= opened)
        #expect(try await caller.value == 7)
        #expect(writes.count == 0)
    }

    @Test("finished() waits for a hold until it is ended, and a hold ends by itself at its deadline")
    func holdsAreWaitedForUntilEndedOrDue() async throws {
        let writes = LastingWrites()
        let held = try #require(writes.hold(until: .now + .seconds(3600)))
        let done = Locked(false)
        let finished = Task {
            await writes.finished()
            done.withLock { $0 = true }
            return ContinuousClock.now
        }
        #expect(writes.count == 1)
        // Time for a wait that did not hold to end (a correct one never does before the end).
        try await Task.sleep(for: .milliseconds(50))
        #expect(!done.value)
        let ended = ContinuousClock.now
        writes.end(held)
        #expect(await finished.value >= ended)
        #expect(writes.count == 0)

        let due = ContinuousClock.now + .milliseconds(200)
        _ = writes.hold(until: due)
        await writes.finished()
        #expect(ContinuousClock.now >= due)
        #expect(writes.count == 0)
        // Ending a hold that ended is nothing.
        writes.end(held)
    }

    @Test("After close() a hold is refused, and finished() waits only for those taken before")
    func aClosedStoreTakesNoHold() async throws {
        let writes = LastingWrites()
        let before = try #require(writes.hold(until: .now + .seconds(3600)))
        #expect(!writes.isClosing)
        writes.close()
        #expect(writes.isClosing)
        #expect(writes.hold(until: .now + .seconds(3600)) == nil)
        #expect(writes.count == 1)
        writes.end(before)
        await writes.finished()
        #expect(writes.count == 0)
    }

    /// Polls `condition` every 10 ms for at most a minute.
    private func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
