
/// Waits for a task shared by several callers, giving up at once when the waiting task is
/// cancelled or a deadline passes (a plain `task.value` would wait for the shared task to end).
package enum SharedTaskWait {
    /// A continuation resumed once, by whichever comes first.
    private final class Waiter<T: Sendable>: Sendable {
        private let continuation = Locked<CheckedContinuation<T, any Error>?>(nil)

        func set(_ continuation: CheckedContinuation<T, any Error>) {
            self.continuation.withLock { $0 = continuation }
        }

        func resume(with result: Result<T, any Error>) {
            continuation.withLock { $0.take() }?.resume(with: result)
        }
    }

    /// The value of `task`; ``APIError/Kind/timeout`` when `deadline` passes first,
    /// `CancellationError` when the caller is cancelled first. `task` goes on either way.
    package static func value<T: Sendable>(of task: Task<T, any Error>, deadline: ContinuousClock.Instant? = nil) async throws -> T {
        let waiter = Waiter<T>()
        let timer: Task<Void, Never>? = deadline.map { deadline in
            Task {
                guard (try? await Task.sleep(until: deadline, clock: .continuous)) != nil else { return }
                waiter.resume(with: .failure(APIError.timedOut()))
            }
        }
        defer { timer?.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                waiter.set(continuation)
                if Task.isCancelled {
                    waiter.resume(with: .failure(CancellationError()))
                    return
                }
                Task { waiter.resume(with: await task.result) }
            }
        } onCancel: {
            waiter.resume(with: .failure(CancellationError()))
        }
    }
}
