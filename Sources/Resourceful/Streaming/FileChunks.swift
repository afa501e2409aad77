import Foundation
import NIOCore

#if canImport(Glibc)
import CDispatch
import CoreFoundation
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The bytes of a regular file as buffers of at most 64 KiB, read on a thread of the file's own
/// (an ``OffPoolWork/Worker``: a file system that does not answer holds it, not NIO's shared
/// thread pool) as the reader asks for them, each wait ended by the reader's cancellation, from
/// one descriptor opened (and checked with `fstat`) by
/// ``open(_:)``: every read of the sequence — a retry, a refreshed credential, a `307` — sends
/// the same file from its start, never another one put at its path since.
///
/// The file must still hold `length` bytes: one that shrank fails the read rather than sending a
/// body shorter than its `Content-Length`; one that grew is read to `length`.
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    typealias Failure = any Error

    /// The opened file, closed when the last sequence reading it is gone.
    let file: OpenedFile
    static let chunkSize = 64 * 1024

    /// The file's size when it was opened: the body's length.
    var length: Int { file.length }

    /// A descriptor of a regular file, closed with the last reference to it.
    final class OpenedFile: Sendable {
        let path: String
        let descriptor: Int32
        let length: Int
        /// The thread its reads run on, one at a time.
        let worker = OffPoolWork.Worker()

        init(path: String, descriptor: Int32, length: Int) {
            self.path = path
            self.descriptor = descriptor
            self.length = length
        }

        deinit {
            // No read is under way: each holds the file until it returns.
            close(descriptor)
            worker.close()
        }
    }

    /// Opens the regular file at `path`, once, as ``RegularFile`` does: a FIFO, a device or a
    /// folder is refused, never read (nor waited on).
    ///
    /// - Throws: ``TransportError/invalidRequest(_:underlying:)`` naming the file when it cannot
    ///   be read or is not a regular file.
    static func open(_ path: String) throws(TransportError) -> FileChunks {
        do {
            let (descriptor, status) = try RegularFile.openForReading(path)
            return FileChunks(file: OpenedFile(path: path, descriptor: descriptor, length: Int(status.st_size)))
        } catch {
            switch error.reason {
            case .notRegularFile:
                throw TransportError.invalidRequest("\(path) is not a regular file")
            case .system(let code):
                throw TransportError.invalidRequest("the file \(path) cannot be read", underlying: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO))
            case .tooLarge, .changed:
                throw TransportError.invalidRequest("the file \(path) cannot be read")
            }
        }
    }

    final class AsyncIterator: AsyncIteratorProtocol {
        private let file: OpenedFile
        private var offset = 0

        init(file: OpenedFile) {
            self.file = file
        }

        func next() async throws -> ByteBuffer? {
            let (file, offset) = (self.file, self.offset)
            guard offset < file.length else { return nil }
            let count = Swift.min(FileChunks.chunkSize, file.length - offset)
            let outcome = await file.worker.run(
                until: .now + API.unboundedStream, abandon: { (_: Result<ByteBuffer, any Error>) in }
            ) { () -> Result<ByteBuffer, any Error> in
                Result { try Self.read(count, at: offset, of: file) }
            }
            let chunk: ByteBuffer
            switch outcome {
            case .done(let result): chunk = try result.get()
            case .timedOut, .cancelled: throw CancellationError()
            }
            self.offset += chunk.readableBytes
            return chunk
        }

        /// Reads `count` bytes at `offset` of `file` (blocking: on the file's worker).
        private static func read(_ count: Int, at offset: Int, of file: OpenedFile) throws -> ByteBuffer {
            var buffer = ByteBuffer()
            let read = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { bytes in
                while true {
                    // `bytes` holds at least `count` writable bytes: pread writes no more.
                    let read = pread(file.descriptor, bytes.baseAddress, count, off_t(offset))
                    if read < 0, errno == EINTR { continue }
                    guard read >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                    return read
                }
            }
            guard read > 0 else { throw TransportError.invalidRequest("the file \(file.path) shrank while it was sent") }
            return buffer
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(file: file)
    }
}
