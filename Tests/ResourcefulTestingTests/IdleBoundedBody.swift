import AsyncHTTPClient
import NIOCore
import Resourceful
import Synchronization

/// An AsyncHTTPClient response body handed on part by part, each part awaited for at most the
/// request's idle time-out and never past its deadline, as an app's streaming transport would
/// bound it: AsyncHTTPClient's async API bounds the wait for the head, not the body.
///
/// A task of its own reads the body one part per `next()` (so the reader's pace still holds the
/// server back); the wait for that part ends at the time-out or on cancellation, and the body is
/// then dropped, which closes its connection.
struct IdleBoundedBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    typealias Failure = any Error

    let body: HTTPClientResponse.Body
    let idle: Duration?
    let deadline: ContinuousClock.Instant

    /// One part handed from the reading task to the waiting `next()`.
    final class Handoff: Sendable {
        private let waiting = Mutex<CheckedContinuation<ByteBuffer?, any Error>?>(nil)

        func wait(_ continuation: CheckedContinuation<ByteBuffer?, any Error>) {
            waiting.withLock { $0 = continuation }
        }

        func deliver(_ result: Result<ByteBuffer?, any Error>) {
            let continuation = waiting.withLock { value in
                defer { value = nil }
                return value
            }
            continuation?.resume(with: result)
        }
    }

    final class AsyncIterator: AsyncIteratorProtocol {
        private let handoff = Handoff()
        private let demand: AsyncStream<Void>.Continuation
        private let reader: Task<Void, Never>
        private let idle: Duration?
        private let deadline: ContinuousClock.Instant
        private var ended = false

        init(body: HTTPClientResponse.Body, idle: Duration?, deadline: ContinuousClock.Instant) {
            self.idle = idle
            self.deadline = deadline
            let (asks, demand) = AsyncStream<Void>.makeStream()
            self.demand = demand
            let handoff = handoff
            reader = Task {
                var parts = body.makeAsyncIterator()
                for await _ in asks {
                    do {
                        let part = try await parts.next()
                        handoff.deliver(.success(part))
                        if part == nil { return }
                    } catch {
                        handoff.deliver(.failure(transportError(error)))
                        return
                    }
                }
            }
        }

        deinit {
            demand.finish()
            reader.cancel()
        }

        func next() async throws -> ByteBuffer? {
            guard !ended else { return nil }
            let (handoff, demand, reader) = (self.handoff, self.demand, self.reader)
            let end = idle.map { Swift.min(ContinuousClock.now + $0, deadline) } ?? deadline
            let timer = Task {
                try await Task.sleep(until: end, clock: .continuous)
                handoff.deliver(.failure(TransportError.timeout))
                reader.cancel()
            }
            defer { timer.cancel() }
            do {
                let part = try await withTaskCancellationHandler {
                    try await withCheckedThrowingContinuation { continuation in
                        handoff.wait(continuation)
                        demand.yield()
                    }
                } onCancel: {
                    handoff.deliver(.failure(TransportError.cancelled))
                    reader.cancel()
                }
                if part == nil { ended = true }
                return part
            } catch {
                ended = true
                throw error
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(body: body, idle: idle, deadline: deadline)
    }
}
