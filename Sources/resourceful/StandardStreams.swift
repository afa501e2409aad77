import Foundation
import Resourceful

#if canImport(Glibc)
import CDispatch
import CoreFoundation
import Glibc
#endif

/// Writes to standard output and standard error with `write(2)`, never with `FileHandle`, whose
/// `write` ends the process when the write fails: a closed pipe while `SIGPIPE` is ignored (as it
/// is during a download), a full disk (`> /dev/full`), a terminal gone.
enum StandardStreams {
    /// Writes all of `bytes` to `descriptor`, again after an interrupted write (and, when the
    /// descriptor is non-blocking, once it can take more); `nil` when all were written, else the
    /// `errno` of the write that failed.
    @discardableResult
    static func write(_ bytes: some Collection<UInt8>, to descriptor: Int32) -> Int32? {
        var rest = Array(bytes)[...]
        while !rest.isEmpty {
            let result = rest.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if result < 0, errno == EINTR { continue }
            if result < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                if poll(&ready, 1, -1) >= 0 || errno == EINTR { continue }
                return errno
            }
            guard result > 0 else { return result < 0 ? errno : EIO }
            rest = rest.dropFirst(result)
        }
        return nil
    }

    /// Writes `bytes` to standard output, or throws an ``APIError/Kind/file`` error that names
    /// why it could not (the reader gone, a full disk).
    static func output(_ bytes: some Collection<UInt8>) throws(APIError) {
        if let failure = write(bytes, to: STDOUT_FILENO) {
            throw APIError(kind: .file, detail: "standard output could not be written: \(String(cString: strerror(failure)))")
        }
    }

    /// Writes `text` to standard error, ignoring a failure: there is nowhere left to tell it.
    static func error(_ text: String) {
        write(Array(text.utf8), to: STDERR_FILENO)
    }
}
