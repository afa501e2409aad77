import Synchronization

/// Waits for a task shared by several callers, giving up at once when the waiting task is
/// cancelled (a plain `task.value` would wait for the shared task to end).
enum SharedTaskWait {
    /// A continuation resumed once, by whichever comes first.
    private final class Waiter<T: Sendable>: Sendable {
        private let continuation = Mutex<CheckedContinuation<T, any Error>?>(nil)

        func set(_ continuation: CheckedContinuation<T, any Error>) {
            self.continuation.withLock { $0 = continuation }
        }

        func resume(with result: Result<T, any Error>) {
            continuation.withLock { $0.take() }?.resume(with: result)
        }
    }

    static func value<T: Sendable>(of task: Task<T, any Error>) async throws -> T {
        let waiter = Waiter<T>()
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
