import NIOCore
import Synchronization

/// How a streamed body ended, for the steps that report on a whole stream (logs, metrics, spans).
package struct StreamEnd: Sendable {
    /// The bytes read.
    package var bytes: Int
    /// What ended it early: an error while reading, or a `CancellationError` when the reader
    /// dropped it before its end; `nil` when it was read to its end.
    package var error: (any Error)?
}

extension TransportBody {
    /// This body, with `onEnd` called once when a stream has been read to its end, failed, or was
    /// dropped unread (its last copy released). Collected bytes are returned as they are.
    package func observingEnd(_ onEnd: @escaping @Sendable (StreamEnd) -> Void) -> TransportBody {
        guard bytes == nil else { return self }
        let watch = EndWatch(onEnd)
        return TransportBody(stream: ObservedBuffers(body: self, watch: watch), length: length)
    }
}

/// Calls its closure once: at the end, on a failure, or when released before either.
private final class EndWatch: Sendable {
    private let onEnd: Locked<(@Sendable (StreamEnd) -> Void)?>
    private let bytes = Atomic<Int>(0)

    init(_ onEnd: @escaping @Sendable (StreamEnd) -> Void) {
        self.onEnd = Locked(onEnd)
    }

    func count(_ count: Int) {
        bytes.add(count, ordering: .relaxed)
    }

    func end(_ error: (any Error)?) {
        let callback = onEnd.withLock { callback in
            defer { callback = nil }
            return callback
        }
        callback?(StreamEnd(bytes: bytes.load(ordering: .relaxed), error: error))
    }

    deinit {
        end(CancellationError())
    }
}

/// The buffers of `body`, counted and watched for their end.
private struct ObservedBuffers: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    typealias Failure = any Error

    let body: TransportBody
    let watch: EndWatch

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: TransportBody.AsyncIterator
        let watch: EndWatch

        mutating func next() async throws -> ByteBuffer? {
            do {
                guard let chunk = try await base.next() else {
                    watch.end(nil)
                    return nil
                }
                watch.count(chunk.readableBytes)
                return chunk
            } catch {
                watch.end(error)
                throw error
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: body.makeAsyncIterator(), watch: watch)
    }
}
