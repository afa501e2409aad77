import Foundation
import NIOCore
import Resourceful

/// A response body handed on as it arrives while its first bytes are kept for a recording: at
/// most `limit` bytes, cut after the last line end within them (whole events and lines). The
/// recording is written when the body ends, fails, or is dropped unread.
struct RecordedStream<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element == ByteBuffer {
    typealias Element = ByteBuffer
    typealias Failure = any Error

    let base: Base
    let keeper: Keeper

    /// What has been kept, and the recording to write once.
    final class Keeper: Sendable {
        private struct State {
            var kept = ByteBuffer()
            var full = false
            var record: (@Sendable (ByteBuffer, Bool) throws -> Void)?
        }

        private let state: Locked<State>
        private let limit: Int

        /// `record` is given the kept bytes, and whether they are only the first of the body.
        init(limit: Int, record: @escaping @Sendable (ByteBuffer, Bool) throws -> Void) {
            self.limit = limit
            state = Locked(State(record: record))
        }

        func keep(_ chunk: ByteBuffer) {
            state.withLock { state in
                guard !state.full else { return }
                var chunk = chunk
                if state.kept.readableBytes + chunk.readableBytes <= limit {
                    state.kept.writeBuffer(&chunk)
                    return
                }
                state.full = true
                let room = limit - state.kept.readableBytes
                var head = chunk.readSlice(length: room) ?? ByteBuffer()
                state.kept.writeBuffer(&head)
                // Whole lines only: an event or a line cut in two would not read back.
                let view = state.kept.readableBytesView
                let end = view.lastIndex(of: UInt8(ascii: "\n")).map { $0 - view.startIndex + 1 } ?? 0
                state.kept = state.kept.getSlice(at: state.kept.readerIndex, length: end) ?? ByteBuffer()
            }
        }

        /// Writes the recording, once.
        func finish() throws {
            let (kept, full, record) = state.withLock { state in
                defer { state.record = nil }
                return (state.kept, state.full, state.record)
            }
            try record?(kept, full)
        }

        deinit {
            try? finish()
        }
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let keeper: Keeper

        mutating func next() async throws -> ByteBuffer? {
            do {
                guard let chunk = try await base.next() else {
                    try keeper.finish()
                    return nil
                }
                keeper.keep(chunk)
                return chunk
            } catch {
                try? keeper.finish()
                throw error
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), keeper: keeper)
    }
}
