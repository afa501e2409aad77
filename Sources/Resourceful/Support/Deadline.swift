/// Runs work that must be over by a point in time.
package enum Deadline {
    /// Runs `operation`, throwing ``APIError/Kind/timeout`` at `deadline` and
    /// ``APIError/Kind/cancelled`` as soon as the calling task is cancelled, whatever `operation`
    /// does meanwhile.
    ///
    /// `operation` runs in a task of its own (with the caller's task-local values): when the
    /// deadline passes or the caller is cancelled first, that task is cancelled and left to end
    /// on its own, and its result is dropped. A task group would wait for it to end, so work that
    /// ignores cancellation would hold the caller past its deadline, or for ever.
    package static func run<T: Sendable>(
        until deadline: ContinuousClock.Instant,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        guard deadline > .now else { throw APIError.timedOut() }
        let outcome = Outcome<T>()
        let work = Task {
            do {
                outcome.settle(.success(try await operation()))
            } catch {
                outcome.settle(.failure(error))
            }
        }
        do {
            return try await outcome.value(deadline: deadline)
        } catch {
            work.cancel()
            if error is CancellationError { throw APIError.cancelled() }
            if let error = error as? APIError, error.kind == .cancelled, !Task.isCancelled, ContinuousClock.now >= deadline {
                throw APIError.timedOut()
            }
            throw error
        }
    }
}

/// A result delivered once, to one waiter that gives up at a deadline or on cancellation.
///
/// Whichever comes first wins: the result (``settle(_:)``, before or after the waiter arrives),
/// the deadline, or the waiter's cancellation; later ones are dropped. The waiter never waits for
/// the work that settles it, and no task is left waiting for that work.
package final class Outcome<T: Sendable>: Sendable {
    private enum State {
        case pending
        case waiting(CheckedContinuation<T, any Error>)
        case settled(Result<T, any Error>)
        case done
    }

    private let state = Locked(State.pending)

    package init() {}

    /// Delivers `result`: to the waiter if one waits, else to the next one that arrives.
    package func settle(_ result: Result<T, any Error>) {
        let continuation: CheckedContinuation<T, any Error>? = state.withLock { state in
            switch state {
            case .pending:
                state = .settled(result)
                return nil
            case .waiting(let continuation):
                state = .done
                return continuation
            case .settled, .done:
                return nil
            }
        }
        continuation?.resume(with: result)
    }

    /// The result; ``APIError/Kind/timeout`` when `deadline` passes first, `CancellationError`
    /// when the calling task is cancelled first. One waiter only.
    package func value(deadline: ContinuousClock.Instant?) async throws -> T {
        let timer: Task<Void, Never>? = deadline.map { deadline in
            Task { [weak self] in
                guard (try? await Task.sleep(until: deadline, clock: .continuous)) != nil else { return }
                self?.settle(.failure(APIError.timedOut()))
            }
        }
        defer { timer?.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let ready: Result<T, any Error>? = state.withLock { state in
                    switch state {
                    case .pending:
                        state = .waiting(continuation)
                        return nil
                    case .settled(let result):
                        state = .done
                        return result
                    case .waiting, .done:
                        state = .done
                        return .failure(CancellationError())
                    }
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            settle(.failure(CancellationError()))
        }
    }
}
