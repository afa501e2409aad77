import Foundation
import NIOCore
import NIOPosix
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A download's file while it is written: a temporary file beside the destination (so that the
/// rename is atomic, on one file system), written on NIO's thread pool, `fsync`ed and renamed
/// into place by ``commit()``, removed by ``discard()``. The destination never holds part of a body.
final class PartialFile: Sendable {
    let destination: String
    let temporary: String
    private let descriptor: Int32
    /// Whether the descriptor was closed (by ``commit()`` or ``discard()``): it is closed once.
    private let closed = Atomic<Bool>(false)

    /// Creates the temporary file beside `destination`.
    ///
    /// - Throws: ``APIError/Kind/file`` naming the folder when it cannot be written.
    static func create(for destination: URL) async throws(APIError) -> PartialFile {
        let path = destination.standardizedFileURL.path
        let folder = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        guard !name.isEmpty, name != "/" else { throw APIError(kind: .file, detail: "\(path) names no file") }
        // Checked before anything is sent, and again just before the rename.
        if case .refused(let what) = Destination.check(path) {
            throw APIError(kind: .file, detail: "\(path) is \(what), not a regular file: it is not replaced")
        }
        let temporary = folder + "/." + name + "." + String(UInt64.random(in: .min ... .max), radix: 36) + ".download"
        do {
            let descriptor = try await NIOThreadPool.singleton.runIfActive { () throws -> Int32 in
                // Readable by its owner alone while it is written; given its final mode at commit.
                let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
                guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                return descriptor
            }
            return PartialFile(destination: path, temporary: temporary, descriptor: descriptor)
        } catch {
            throw APIError(kind: .file, detail: "the folder \(folder) cannot be written: \(Self.reason(error))", underlying: error)
        }
    }

    private init(destination: String, temporary: String, descriptor: Int32) {
        self.destination = destination
        self.temporary = temporary
        self.descriptor = descriptor
    }

    /// Writes `buffer` at `offset`.
    ///
    /// - Throws: ``APIError/Kind/file`` (a full disk, say).
    func write(_ buffer: ByteBuffer, at offset: Int) async throws(APIError) {
        let descriptor = self.descriptor
        do {
            try await NIOThreadPool.singleton.runIfActive {
                var written = 0
                try buffer.withUnsafeReadableBytes { bytes in
                    while written < bytes.count {
                        // `written < bytes.count`: the pointer and count stay within `bytes`.
                        let result = pwrite(descriptor, bytes.baseAddress! + written, bytes.count - written, off_t(offset + written))
                        if result < 0, errno == EINTR { continue }
                        guard result > 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                        written += result
                    }
                }
            }
        } catch {
            throw APIError(kind: .file, detail: "\(temporary) could not be written: \(Self.reason(error))", underlying: error)
        }
    }

    /// Cuts the file to `length` bytes (a download starting again from 0).
    func truncate(to length: Int) async throws(APIError) {
        let descriptor = self.descriptor
        do {
            try await NIOThreadPool.singleton.runIfActive {
                guard ftruncate(descriptor, off_t(length)) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            }
        } catch {
            throw APIError(kind: .file, detail: "\(temporary) could not be truncated: \(Self.reason(error))", underlying: error)
        }
    }

    /// Flushes the file to disk, closes it and renames it to the destination, then flushes the
    /// folder, so that the name survives a crash.
    func commit() async throws(APIError) {
        let (descriptor, temporary, destination) = (self.descriptor, self.temporary, self.destination)
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        do {
            try await NIOThreadPool.singleton.runIfActive {
                defer { close(descriptor) }
                // The permissions of the regular file it replaces, or a new file's (0666 less
                // the umask); never the set-user-ID, set-group-ID or sticky bits, which would
                // make the server's bytes a program that runs with another's rights.
                let mode: mode_t
                switch Destination.check(destination) {
                case .refused(let what): throw Destination.Refused(what: what)
                case .regularFile(let existing): mode = existing & 0o777
                case .absent: mode = PartialFile.newFileMode()
                }
                guard fchmod(descriptor, mode) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                guard fsync(descriptor) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                guard rename(temporary, destination) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                let folder = open((destination as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                if folder >= 0 {
                    _ = fsync(folder)
                    close(folder)
                }
            }
        } catch let refused as Destination.Refused {
            unlink(temporary)
            throw APIError(kind: .file, detail: "\(destination) is \(refused.what), not a regular file: it is not replaced")
        } catch {
            unlink(temporary)
            throw APIError(kind: .file, detail: "\(destination) could not be written: \(Self.reason(error))", underlying: error)
        }
    }

    /// A file neither committed nor discarded (a path that forgot to) is removed all the same.
    deinit {
        discard()
    }

    /// Closes and removes the temporary file. Runs on the calling thread: it must happen even
    /// when the task is cancelled, and neither call blocks for long.
    func discard() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        close(descriptor)
        unlink(temporary)
    }

    /// The mode a new file gets: 0666 less the process's umask, read from `/proc` (setting the
    /// umask to read it would race with other threads); 0644 when it cannot be read.
    static func newFileMode() -> mode_t {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Umask:") }),
            let mask = mode_t(line.dropFirst(6).trimmingCharacters(in: .whitespaces), radix: 8)
        else { return 0o644 }
        return 0o666 & ~mask
    }

    /// What is at a download's destination: what the download may replace.
    enum Destination {
        /// Nothing: the download creates the file.
        case absent
        /// A regular file (or a symbolic link to one, which the download replaces), with its mode.
        case regularFile(mode: mode_t)
        /// Anything else: a folder, a device, a FIFO, a socket, a link to one of them, or a
        /// name that cannot be looked at; named in words.
        case refused(String)

        /// A destination refused just before the rename.
        struct Refused: Error {
            let what: String
        }

        /// Looks at `path` with `lstat` (and `stat` through a symbolic link), never opening it:
        /// opening a device or a FIFO can block or act on it (a tape rewinds, a watchdog starts).
        static func check(_ path: String) -> Destination {
            var status = stat()
            guard lstat(path, &status) == 0 else {
                return errno == ENOENT ? .absent : .refused("a name that cannot be looked at (\(String(cString: strerror(errno))))")
            }
            if status.st_mode & S_IFMT == S_IFLNK {
                var target = stat()
                guard stat(path, &target) == 0 else {
                    // A dangling link: the rename replaces the link itself.
                    return errno == ENOENT ? .absent : .refused("a symbolic link that cannot be followed")
                }
                guard target.st_mode & S_IFMT == S_IFREG else { return .refused("a symbolic link to " + kind(target.st_mode)) }
                return .regularFile(mode: ownMode(target))
            }
            guard status.st_mode & S_IFMT == S_IFREG else { return .refused(kind(status.st_mode)) }
            return .regularFile(mode: ownMode(status))
        }

        /// The mode the replacing file keeps: the replaced file's when it is this user's own; a new
        /// file's when another user made it (in a folder both may write to), so that a file made
        /// `0666` by someone else does not make the download readable and writable by them.
        private static func ownMode(_ status: stat) -> mode_t {
            status.st_uid == geteuid() ? status.st_mode : PartialFile.newFileMode()
        }

        private static func kind(_ mode: mode_t) -> String {
            switch mode & S_IFMT {
            case S_IFDIR: "a folder"
            case S_IFCHR: "a character device"
            case S_IFBLK: "a block device"
            case S_IFIFO: "a FIFO"
            case S_IFSOCK: "a socket"
            case S_IFLNK: "a symbolic link"
            default: "a file of an unknown kind"
            }
        }
    }

    /// An error as a download's detail names it: the system's message for an `errno`.
    private static func reason(_ error: any Error) -> String {
        if let error = error as? POSIXError { return String(cString: strerror(error.code.rawValue)) }
        return "\(type(of: error))"
    }
}
