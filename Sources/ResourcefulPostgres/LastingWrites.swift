import Resourceful

/// Writes that outlive the call that asked for them (a rotated refresh token's: the token spent
/// is gone at the server, so its successor must reach the store), which the shared state's
/// shutdown waits for before it closes its connections.
///
/// Each write bounds its own time (``PostgresRefreshTokenStorage``'s write window), so waiting for
/// them all is bounded too.
final class LastingWrites: Sendable {
    private struct Running: Sendable {
        var next = 0
        var tasks: [Int: Task<Void, Never>] = [:]
        var closing = false
    }

    private let running = Locked(Running())

    /// What `body` returned or threw, run in a task of its own that the caller's cancellation does
    /// not reach and that ``finished()`` waits for.
    func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let write = Task.detached(operation: body)
        running.withLock { running in
            let id = running.next
            running.next += 1
            // The task removes itself under the same lock, so it is never found after it ended.
            running.tasks[id] = Task.detached { [running = self.running] in
                _ = await write.result
                running.withLock { _ = $0.tasks.removeValue(forKey: id) }
            }
        }
        return try await write.value
    }

    /// Holds ``finished()`` back until ``end(_:)`` is called with the number returned, or until
    /// `deadline`: for a write that is still to come (a refresh token claimed, whose successor
    /// the token server is being asked for). `nil` once ``close()`` was called (under the same
    /// lock: a hold is either refused or waited for by ``finished()``).
    func hold(until deadline: ContinuousClock.Instant) -> Int? {
        running.withLock { running in
            guard !running.closing else { return nil }
            let id = running.next
            running.next += 1
            running.tasks[id] = Task.detached { [running = self.running] in
                try? await Task.sleep(until: deadline)
                running.withLock { _ = $0.tasks.removeValue(forKey: id) }
            }
            return id
        }
    }

    /// Ends the hold `id` (``hold(until:)``); nothing when it ended already.
    func end(_ id: Int) {
        running.withLock { $0.tasks.removeValue(forKey: id) }?.cancel()
    }

    /// How many writes are running.
    var count: Int {
        running.withLock { $0.tasks.count }
    }

    /// Says that the store is ending: no write is to be begun that would need it later (a
    /// refresh token is not claimed now), so that ``finished()`` is not held by new ones.
    func close() {
        running.withLock { $0.closing = true }
    }

    /// Whether ``close()`` was called.
    var isClosing: Bool {
        running.withLock { $0.closing }
    }

    /// Returns once no write is running or held, those begun meanwhile included (after
    /// ``close()``, only those that raced it).
    func finished() async {
        while let tasks = running.withLock({ $0.tasks.isEmpty ? nil : Array($0.tasks.values) }) {
            for task in tasks { await task.value }
        }
    }
}
