/// Runs work that must be over by a point in time.
enum Deadline {
    /// Runs `operation`, cancelling it and throwing ``APIError/Kind/timeout`` at `deadline`.
    /// Cancelling the calling task cancels `operation` and throws ``APIError/Kind/cancelled``.
    static func run<T: Sendable>(
        until deadline: ContinuousClock.Instant,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        guard deadline > .now else { throw APIError(kind: .timeout) }
        return try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask(operation: operation)
            group.addTask {
                try await Task.sleep(until: deadline, clock: .continuous)
                throw APIError(kind: .timeout)
            }
            defer { group.cancelAll() }
            do {
                guard let first = try await group.next() else { throw APIError(kind: .cancelled) }
                return first
            } catch is CancellationError {
                throw APIError(kind: .cancelled)
            } catch let error as APIError where error.kind == .cancelled && Task.isCancelled == false && ContinuousClock.now >= deadline {
                throw APIError(kind: .timeout)
            }
        }
    }
}
