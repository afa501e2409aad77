public import NIOCore
import Synchronization

/// The body of a ``TransportRequest`` or ``TransportResponse``: bytes already collected, or an
/// async sequence of buffers still arriving.
///
/// Collected bytes are the simple path, and what every body is today unless a transport or
/// middleware streams one. A streamed body is read once, at the pace of its reader: a transport
/// that hands over an async sequence with back-pressure reads the network only as fast as the
/// body is consumed. ``collect(upTo:)`` turns either into one buffer, refusing one larger than a
/// limit.
///
/// ```swift
/// let body = TransportBody(stream: chunks, length: 2_048)
/// for try await chunk in body { try handle.write(chunk) }
/// ```
public struct TransportBody: Sendable {
    private enum Storage: Sendable {
        case bytes(ByteBuffer)
        case stream(any AsyncSequence<ByteBuffer, any Error> & Sendable, length: Int?)
        case replayable(@Sendable () -> any AsyncSequence<ByteBuffer, any Error> & Sendable, length: Int?)
    }

    private let storage: Storage

    /// An empty body.
    public init() {
        storage = .bytes(ByteBuffer())
    }

    /// A body of collected bytes.
    public init(_ bytes: ByteBuffer) {
        storage = .bytes(bytes)
    }

    /// A body of the UTF-8 bytes of `text`.
    public init(_ text: String) {
        storage = .bytes(ByteBuffer(string: text))
    }

    /// A body that arrives as the buffers of `stream`, `length` bytes in all when known. It can be
    /// read once.
    public init<Stream: AsyncSequence & Sendable>(stream: Stream, length: Int? = nil) where Stream.Element == ByteBuffer {
        storage = .stream(OneShotBuffers(base: ThrowingBuffers(base: stream)), length: length)
    }

    /// A body that can be read more than once, each read from a new stream of `makeStream`'s,
    /// `length` bytes in all when known: a retry, a refreshed credential or a `307` sends it
    /// again.
    public init<Stream: AsyncSequence & Sendable>(
        length: Int?,
        replayable makeStream: @escaping @Sendable () -> Stream
    ) where Stream.Element == ByteBuffer {
        storage = .replayable({ ThrowingBuffers(base: makeStream()) }, length: length)
    }

    /// A body read from the regular file at `path` as it is sent, 64 KiB at a time, never whole;
    /// its length is the file's size now. The file is opened once, here: each sending reads
    /// that same file again from its start.
    ///
    /// - Throws: ``TransportError/invalidRequest(_:underlying:)`` when the file cannot be read or
    ///   is not a regular file. One that shrinks before it is sent fails the exchange with the
    ///   same kind.
    public init(contentsOfFile path: String) throws(TransportError) {
        let file = try FileChunks.open(path)
        self.init(length: file.length, replayable: { file })
    }

    /// Whether the body can be sent more than once: collected bytes, or a replayable stream.
    public var canBeSentAgain: Bool {
        if case .stream = storage { return false }
        return true
    }

    /// Whether a body that can be read once has been started: sending it again would send
    /// nothing, or the rest.
    var wasRead: Bool {
        if case .stream(let stream, _) = storage, let once = stream as? any ReadOnce { return once.wasRead }
        return false
    }

    /// The bytes, when the body is collected; `nil` for a stream.
    public var bytes: ByteBuffer? {
        if case .bytes(let bytes) = storage { return bytes }
        return nil
    }

    /// The body's size in bytes, when known: always for collected bytes, for a stream when it
    /// was given.
    public var length: Int? {
        switch storage {
        case .bytes(let bytes): bytes.readableBytes
        case .stream(_, let length), .replayable(_, let length): length
        }
    }

    /// Whether the body is known to hold no bytes.
    public var isEmpty: Bool { length == 0 }

    /// The whole body as one buffer: the bytes as they are, or a stream read to its end.
    ///
    /// - Throws: ``TransportError/responseTooLarge`` as soon as more than `maxBytes` bytes arrived
    ///   (reading no further), or what the stream threw.
    public func collect(upTo maxBytes: Int) async throws -> ByteBuffer {
        switch storage {
        case .bytes(let bytes):
            guard bytes.readableBytes <= maxBytes else { throw TransportError.responseTooLarge }
            return bytes
        case .stream(_, let length), .replayable(_, let length):
            if let length, length > maxBytes { throw TransportError.responseTooLarge }
            var collected = ByteBuffer()
            // What is announced is reserved up to 1 MiB; the rest as it arrives.
            if let length { collected.reserveCapacity(Swift.min(length, 1 << 20)) }
            for try await var chunk in self {
                guard chunk.readableBytes <= maxBytes - collected.readableBytes else { throw TransportError.responseTooLarge }
                collected.writeBuffer(&chunk)
            }
            return collected
        }
    }
}

extension TransportBody: AsyncSequence {
    /// Buffers of the body, in order.
    public typealias Element = ByteBuffer
    /// What reading a stream may throw.
    public typealias Failure = any Error

    /// Reads a body: collected bytes as one buffer (none when empty), a stream as it arrives.
    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate enum State {
            case bytes(ByteBuffer)
            case stream(any AsyncIteratorProtocol<ByteBuffer, any Error>)
            case done
        }

        fileprivate var state: State

        /// The next buffer, or `nil` at the end.
        public mutating func next() async throws -> ByteBuffer? {
            switch state {
            case .bytes(let bytes):
                state = .done
                return bytes.readableBytes > 0 ? bytes : nil
            case .stream(var iterator):
                let chunk = try await Self.advance(&iterator)
                state = chunk == nil ? .done : .stream(iterator)
                return chunk
            case .done:
                return nil
            }
        }

        private static func advance(_ iterator: inout some AsyncIteratorProtocol<ByteBuffer, any Error>) async throws -> ByteBuffer? {
            try await iterator.next()
        }
    }

    /// Starts reading the body.
    public func makeAsyncIterator() -> AsyncIterator {
        switch storage {
        case .bytes(let bytes): AsyncIterator(state: .bytes(bytes))
        case .stream(let stream, _): AsyncIterator(state: .stream(stream.makeAsyncIterator()))
        case .replayable(let makeStream, _): AsyncIterator(state: .stream(makeStream().makeAsyncIterator()))
        }
    }
}

/// Whether a single-use stream has been started.
private protocol ReadOnce {
    var wasRead: Bool { get }
}

/// A stream read at most once: a second reading fails at once instead of silently sending
/// nothing (a body whose `Content-Length` was already promised).
private struct OneShotBuffers<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable, ReadOnce where Base.Element == ByteBuffer {
    typealias Element = ByteBuffer
    typealias Failure = any Error

    let base: Base
    private let taken = TakenFlag()

    init(base: Base) {
        self.base = base
    }

    var wasRead: Bool { taken.flag.load(ordering: .acquiring) }

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator?

        mutating func next() async throws -> ByteBuffer? {
            guard base != nil else { throw TransportError.invalidRequest("a streamed body can be read once, and was read already") }
            return try await base?.next()
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        let first = !taken.flag.exchange(true, ordering: .acquiringAndReleasing)
        return AsyncIterator(base: first ? base.makeAsyncIterator() : nil)
    }
}

/// Set once a stream was started.
private final class TakenFlag: Sendable {
    let flag = Atomic<Bool>(false)
}

/// A sequence of buffers as one that may throw, whatever its own failure type.
private struct ThrowingBuffers<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element == ByteBuffer {
    typealias Element = ByteBuffer
    typealias Failure = any Error

    let base: Base

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator

        mutating func next() async throws -> ByteBuffer? {
            try await base.next()
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator())
    }
}

extension AsyncSequence where Self: Sendable, Element == ByteBuffer {
    /// This sequence, with each error it throws replaced by `transform`'s.
    func mapErrors(_ transform: @escaping @Sendable (any Error) -> any Error) -> ErrorMappingBuffers<Self> {
        ErrorMappingBuffers(base: self, transform: transform)
    }
}

/// Buffers of `base`, its errors changed by `transform`.
struct ErrorMappingBuffers<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element == ByteBuffer {
    typealias Element = ByteBuffer
    typealias Failure = any Error

    let base: Base
    let transform: @Sendable (any Error) -> any Error

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let transform: @Sendable (any Error) -> any Error

        mutating func next() async throws -> ByteBuffer? {
            do {
                return try await base.next()
            } catch {
                throw transform(error)
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), transform: transform)
    }
}
