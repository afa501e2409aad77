#if canImport(Glibc)
import CDispatch
import CoreFoundation
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a private file (a key named by its path) was not read. Names the path and what to do,
/// never a byte of the file.
package struct PrivateFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, such as `is readable by group or others (mode 0644): run chmod 600 <path>`.
    package let reason: String

    /// The reason.
    package var description: String { reason }
}

/// Reads a file that holds a private key as ssh reads one: the name itself must be a regular file
/// (a symlink is refused: whoever can write where it points chooses the key), opened once with
/// `O_NOFOLLOW` and checked with `fstat` on that descriptor, owned by this user (or root), and
/// neither readable nor writable by group or others.
package enum PrivateFile {
    /// The file's bytes.
    ///
    /// - Throws: ``PrivateFileError`` saying what is wrong and, for permissions, the `chmod 600`
    ///   that fixes it.
    package static func contents(of path: String, maximumBytes: Int) throws(PrivateFileError) -> [UInt8] {
        var named = stat()
        guard lstat(path, &named) == 0 else { throw PrivateFileError(reason: "cannot be read (" + String(cString: strerror(errno)) + ")") }
        if named.st_mode & S_IFMT == S_IFLNK {
            throw PrivateFileError(reason: "is a symbolic link: name the key file itself, readable by you alone (chmod 600)")
        }
        // A device or a FIFO is refused before it is opened: opening one can act on it or wait.
        guard named.st_mode & S_IFMT == S_IFREG else { throw PrivateFileError(reason: "is not a regular file") }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW)
        guard descriptor >= 0 else { throw PrivateFileError(reason: "cannot be read (" + String(cString: strerror(errno)) + ")") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw PrivateFileError(reason: "cannot be read (" + String(cString: strerror(errno)) + ")") }
        try check(status, path: path)
        guard status.st_size >= 0, Int(status.st_size) <= maximumBytes else {
            throw PrivateFileError(reason: "is larger than \(maximumBytes) bytes")
        }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size) + 1)
        var count = 0
        while count < bytes.count {
            let received = bytes.withUnsafeMutableBytes { buffer in
                // Never empty: it holds at least the one extra byte that notices a growing file.
                read(descriptor, buffer.baseAddress.map { $0 + count }, buffer.count - count)
            }
            if received < 0 {
                if errno == EINTR { continue }
                throw PrivateFileError(reason: "cannot be read (" + String(cString: strerror(errno)) + ")")
            }
            if received == 0 { break }
            count += received
        }
        guard count < bytes.count else { throw PrivateFileError(reason: "changed while it was read") }
        bytes.removeSubrange(count...)
        return bytes
    }

    /// Refuses what `status` (from `fstat` on the descriptor) shows to be unsafe for a private
    /// key: not a regular file, another user's, or open to group or others.
    static func check(_ status: stat, path: String) throws(PrivateFileError) {
        guard status.st_mode & S_IFMT == S_IFREG else { throw PrivateFileError(reason: "is not a regular file") }
        guard status.st_uid == geteuid() || status.st_uid == 0 else {
            throw PrivateFileError(reason: "belongs to another user (uid \(status.st_uid)): use a key file of your own, readable by you alone (chmod 600)")
        }
        let permissions = status.st_mode & 0o777
        guard permissions & 0o077 == 0 else {
            let mode = String(permissions, radix: 8)
            throw PrivateFileError(
                reason: "is open to group or others (mode 0\(mode)): run chmod 600 \(path)"
            )
        }
    }
}
