#if canImport(Glibc)
import CDispatch
import CoreFoundation
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads one credential file: its identity, to notice when it has been replaced, and its contents,
/// trimmed and checked. Errors name the path, never the contents.
enum CredentialFile {
    /// What changes when the file is replaced (by rename or by a symlink swap) or rewritten.
    struct Identity: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int64
        var modifiedNanoseconds: Int64
        /// The permission bits (`st_mode & 0o7777`): a `chmod` counts as a change.
        var permissions: UInt32
        /// The owner's user ID.
        var owner: UInt32

        init(_ status: stat) {
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
            size = Int64(status.st_size)
            modified = Int64(status.st_mtim.tv_sec)
            modifiedNanoseconds = Int64(status.st_mtim.tv_nsec)
            permissions = UInt32(status.st_mode & 0o7777)
            owner = UInt32(status.st_uid)
        }

        /// Whether group or others may read or write the file.
        var isOpenToOthers: Bool { permissions & 0o077 != 0 }
    }

    /// The identity of the file at `path`, following symlinks.
    static func identity(of path: String) throws(AuthenticationStorageError) -> Identity {
        var status = stat()
        guard stat(path, &status) == 0 else { throw failure(errno, path: path) }
        return Identity(status)
    }

    /// The file's contents without trailing newlines, and its identity; line breaks inside are
    /// refused unless `lineBreaksInside` (a PEM key), NUL always. A file of another user (not
    /// this one, not root) is refused, as ssh refuses such a key: its owner chooses the secret.
    /// What is checked is the descriptor read from (`fstat`), never the name.
    static func load(
        _ path: String, maximumBytes: Int, lineBreaksInside: Bool = false
    ) throws(AuthenticationStorageError) -> (value: String, identity: Identity) {
        let source = "file \(path)"
        let bytes: [UInt8]
        let status: stat
        do {
            (bytes, status) = try RegularFile.contents(of: path, maximumBytes: maximumBytes)
        } catch {
            switch error.reason {
            case .system(let code):
                throw failure(code, path: path)
            case .notRegularFile:
                throw AuthenticationStorageError(kind: .unreadable, source: source, detail: "is not a regular file")
            case .tooLarge(let size?):
                throw AuthenticationStorageError(kind: .tooLarge, source: source, detail: "holds \(size) bytes, over the limit of \(maximumBytes)")
            case .tooLarge(nil):
                throw AuthenticationStorageError(kind: .tooLarge, source: source, detail: "holds more than the limit of \(maximumBytes) bytes")
            case .changed:
                // A writer is at work: this is not a whole version.
                throw AuthenticationStorageError(kind: .unreadable, source: source, detail: "changed while it was read")
            }
        }
        let owner = status.st_uid
        guard owner == geteuid() || owner == 0 else {
            throw AuthenticationStorageError(kind: .unreadable, source: source, detail: "belongs to another user (uid \(owner)): a secret file must be yours or root's")
        }
        var count = bytes.count
        while count > 0 && (bytes[count - 1] == 0x0A || bytes[count - 1] == 0x0D) { count -= 1 }
        guard count > 0 else { throw AuthenticationStorageError(kind: .empty, source: source, detail: "is empty") }
        guard !bytes[0..<count].contains(where: { $0 == 0x00 || (!lineBreaksInside && ($0 == 0x0A || $0 == 0x0D)) }) else {
            throw AuthenticationStorageError(kind: .invalidValue, source: source, detail: lineBreaksInside ? "holds a NUL" : "holds a line break or NUL inside")
        }
        guard let value = String(validating: bytes[0..<count], as: UTF8.self) else {
            throw AuthenticationStorageError(kind: .invalidValue, source: source, detail: "is not UTF-8 text")
        }
        return (value, Identity(status))
    }

    /// Whether `path` is a symbolic link whose target, all links resolved, is not inside
    /// `directory` (resolved too).
    static func isSymlinkLeaving(_ path: String, directory: String) -> Bool {
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFLNK else { return false }
        guard let target = realpath(path, nil) else { return true }
        defer { free(target) }
        guard let folder = realpath(directory, nil) else { return true }
        defer { free(folder) }
        let resolvedFolder = String(cString: folder)
        return !String(cString: target).hasPrefix(resolvedFolder == "/" ? "/" : resolvedFolder + "/")
    }

    /// The error for a failed system call on `path`.
    static func failure(_ code: Int32, path: String) -> AuthenticationStorageError {
        let source = "file \(path)"
        switch code {
        case ENOENT, ENOTDIR:
            let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
            var status = stat()
            if !directory.isEmpty, stat(directory, &status) != 0 || status.st_mode & S_IFMT != S_IFDIR {
                return AuthenticationStorageError(kind: .missing, source: source, detail: "its directory \(directory) does not exist")
            }
            return AuthenticationStorageError(kind: .missing, source: source, detail: "does not exist")
        case EACCES, EPERM:
            return AuthenticationStorageError(kind: .unreadable, source: source, detail: "permission denied")
        case EISDIR:
            return AuthenticationStorageError(kind: .unreadable, source: source, detail: "is not a regular file")
        default:
            return AuthenticationStorageError(kind: .unreadable, source: source, detail: String(cString: strerror(code)))
        }
    }
}
