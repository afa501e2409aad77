import Foundation
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The bytes of a file on disk as buffers of at most 64 KiB, read on NIO's thread pool as the
/// reader asks for them: the file is opened by the first read and closed at its end (or when the
/// reader drops it), so a second read of the sequence opens it again.
///
/// The file must still hold `length` bytes: one that shrank fails the read rather than sending a
/// body shorter than its `Content-Length`; one that grew is read to `length`.
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    typealias Failure = any Error

    let path: String
    let length: Int
    static let chunkSize = 64 * 1024

    /// The size of the regular file at `path`.
    ///
    /// - Throws: ``TransportError/invalidRequest(_:underlying:)`` naming the file when it cannot
    ///   be read or is not a regular file.
    static func size(of path: String) throws(TransportError) -> Int {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw TransportError.invalidRequest("the file \(path) cannot be read", underlying: POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO))
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw TransportError.invalidRequest("\(path) is not a regular file") }
        guard access(path, R_OK) == 0 else {
            throw TransportError.invalidRequest("the file \(path) cannot be read", underlying: POSIXError(POSIXErrorCode(rawValue: errno) ?? .EACCES))
        }
        return Int(info.st_size)
    }

    final class AsyncIterator: AsyncIteratorProtocol {
        private let path: String
        private let length: Int
        private var descriptor: Int32 = -1
        private var offset = 0

        init(path: String, length: Int) {
            self.path = path
            self.length = length
        }

        deinit {
            if descriptor >= 0 { close(descriptor) }
        }

        func next() async throws -> ByteBuffer? {
            guard offset < length else {
                closeFile()
                return nil
            }
            if descriptor < 0 {
                let path = self.path
                descriptor = try await NIOThreadPool.singleton.runIfActive {
                    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
                    guard descriptor >= 0 else {
                        throw TransportError.invalidRequest("the file \(path) cannot be read", underlying: POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO))
                    }
                    return descriptor
                }
            }
            let (descriptor, offset, count, path) = (self.descriptor, self.offset, Swift.min(FileChunks.chunkSize, length - offset), self.path)
            let chunk = try await NIOThreadPool.singleton.runIfActive { () throws -> ByteBuffer in
                var buffer = ByteBuffer()
                let read = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { bytes in
                    // `bytes` holds at least `count` writable bytes: pread writes no more.
                    let read = pread(descriptor, bytes.baseAddress, count, off_t(offset))
                    guard read >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                    return read
                }
                guard read > 0 else { throw TransportError.invalidRequest("the file \(path) shrank while it was sent") }
                return buffer
            }
            self.offset += chunk.readableBytes
            return chunk
        }

        private func closeFile() {
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(path: path, length: length)
    }
}
