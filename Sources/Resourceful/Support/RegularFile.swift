#if canImport(Glibc)
import CDispatch
import CoreFoundation
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a regular file through one descriptor: opened without blocking (opening a FIFO for
/// reading would otherwise wait for a writer for ever), checked with `fstat` on that descriptor to
/// be a regular file of bounded size, then read from it. What is checked is what is read: a file
/// swapped for a FIFO, a device or another file between a check and an open cannot slip through.
///
/// Every call here blocks its thread for as long as the file system does not answer (a hung NFS
/// or FUSE mount): code on a call's path runs it on a thread of its own, never on the
/// cooperative pool, and waits for it no longer than the call's deadline, as
/// ``FileAuthenticationStorage`` does (``CredentialFileReads``).
enum RegularFile {
    /// Why a file was not read. Holds no byte of the file.
    struct Failure: Error, Equatable {
        enum Reason: Equatable {
            /// A system call failed with this `errno` (`ENOENT`, `EACCES`…).
            case system(Int32)
            /// A FIFO, a directory, a device or a socket.
            case notRegularFile
            /// Larger than the limit (its size, or `nil` when it grew past the limit while read).
            case tooLarge(Int64?)
            /// It grew while it was read: not one whole version of it.
            case changed
        }

        let reason: Reason
    }

    /// Opens the regular file at `path` for reading: a descriptor the caller closes, and its
    /// status as `fstat` gave it on that descriptor.
    ///
    /// A name that is plainly not a regular file is refused without being opened (opening a
    /// device can act on it); the open does not block (a FIFO put there meanwhile would wait for
    /// a writer for ever) and the descriptor's own `fstat` decides.
    static func openForReading(_ path: String) throws(Failure) -> (descriptor: Int32, status: stat) {
        var named = stat()
        guard stat(path, &named) == 0 else { throw Failure(reason: .system(errno)) }
        guard named.st_mode & S_IFMT == S_IFREG else { throw Failure(reason: .notRegularFile) }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard descriptor >= 0 else { throw Failure(reason: .system(errno)) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let code = errno
            close(descriptor)
            throw Failure(reason: .system(code))
        }
        guard status.st_mode & S_IFMT == S_IFREG, status.st_size >= 0 else {
            close(descriptor)
            throw Failure(reason: .notRegularFile)
        }
        return (descriptor, status)
    }

    /// Whether `path`, as written, passes through a symbolic link: itself or any folder on it
    /// (`Configs` in `Configs/development.json`). Relative parts are taken from the working
    /// directory, and a part that does not exist ends the walk. For a message that must not show
    /// what a link may lead to, not for a decision a racing local user could change.
    static func passesThroughSymbolicLink(_ path: String) -> Bool {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += (prefix.isEmpty || prefix.hasSuffix("/") ? "" : "/") + component
            var status = stat()
            guard lstat(prefix, &status) == 0 else { return false }
            if status.st_mode & S_IFMT == S_IFLNK { return true }
        }
        return false
    }

    /// The file's bytes and its status, as `fstat` gave it on the descriptor read from.
    static func contents(of path: String, maximumBytes: Int) throws(Failure) -> (bytes: [UInt8], status: stat) {
        let (descriptor, status) = try openForReading(path)
        defer { close(descriptor) }
        guard Int(status.st_size) <= maximumBytes else {
            throw Failure(reason: .tooLarge(Int64(status.st_size)))
        }
        // One byte more than the file's size (and at most than the limit), to notice a file that
        // grew since `fstat`.
        var bytes = [UInt8](repeating: 0, count: min(Int(status.st_size), maximumBytes) + 1)
        var count = 0
        while count < bytes.count {
            let received = bytes.withUnsafeMutableBytes { buffer in
                // The buffer is never empty: it holds at least the one extra byte.
                read(descriptor, buffer.baseAddress.map { $0 + count }, buffer.count - count)
            }
            if received < 0 {
                if errno == EINTR { continue }
                throw Failure(reason: .system(errno))
            }
            if received == 0 { break }
            count += received
        }
        guard count <= maximumBytes else { throw Failure(reason: .tooLarge(nil)) }
        guard count < bytes.count else { throw Failure(reason: .changed) }
        bytes.removeSubrange(count...)
        return (bytes, status)
    }
}

/// Why ``readRegularFile(_:maximumBytes:)`` read nothing, in words: never a byte of the file.
package struct RegularFileReadError: Error, Sendable {
    /// `not a regular file`, `larger than 65536 bytes`, `No such file or directory`…
    package let reason: String
}

/// The bytes of the regular file at `path`, of at most `maximumBytes`, read as ``RegularFile``
/// reads them (a FIFO, a device or a huge file refused before anything is read), for the
/// package's other modules.
package func readRegularFile(_ path: String, maximumBytes: Int) throws(RegularFileReadError) -> [UInt8] {
    do {
        return try RegularFile.contents(of: path, maximumBytes: maximumBytes).bytes
    } catch {
        switch error.reason {
        case .system(let code): throw RegularFileReadError(reason: String(cString: strerror(code)))
        case .notRegularFile: throw RegularFileReadError(reason: "not a regular file")
        case .tooLarge: throw RegularFileReadError(reason: "larger than \(maximumBytes) bytes")
        case .changed: throw RegularFileReadError(reason: "it changed while it was read")
        }
    }
}

/// ``readRegularFile(_:maximumBytes:)`` on a thread of its own (``OffPoolWork``), waited for
/// until `deadline` or the task's cancellation: a file system that does not answer (a hung
/// network mount) holds that thread, never the caller's.
package func readRegularFile(_ path: String, maximumBytes: Int, until deadline: ContinuousClock.Instant) async throws(RegularFileReadError) -> [UInt8] {
    let outcome = await OffPoolWork.run(until: deadline, abandon: { (_: Result<[UInt8], RegularFileReadError>) in }) {
        Result { () throws(RegularFileReadError) in try readRegularFile(path, maximumBytes: maximumBytes) }
    }
    switch outcome {
    case .done(let result): return try result.get()
    case .timedOut: throw RegularFileReadError(reason: "its file system did not answer in time (a hung network mount?)")
    case .cancelled: throw RegularFileReadError(reason: "cancelled while its file system did not answer")
    }
}
