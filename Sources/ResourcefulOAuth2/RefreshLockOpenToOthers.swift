import Crypto
import Dispatch
import Foundation
import Logging
import Resourceful
import Synchronization

#if canImport(Glibc)
    // `struct stat`'s members are visible through the module that declares it first in this
    // target's module graph, which differs between a file-by-file build (Dispatch's C headers)
    // and a whole-module one (CoreFoundation's): both are imported, so that either compiles.
    import CDispatch
    import CoreFoundation
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension RefreshLock {
    /// Locks `file`, a lock file others could open (blocking: on the lock's own thread), by putting
    /// a new 0600 file in its place and locking that: when this process holds the old file's lock
    /// (so no process of the user's does), or when the one who holds it is a process of another
    /// user (``heldByAnotherUser(_:)``: they opened it while it was open to them, and could hold
    /// it for ever). When the holder may be a process of the user's (a renewal under way when the
    /// file was made readable), it is waited for as any busy lock is, until the deadline: the file
    /// is never replaced under it, which would let a second process lock the new file and spend
    /// the same refresh token.
    static func lockOpenToOthers(_ file: File) -> Step {
        // What held it up last time is told again by this attempt.
        var file = file
        file.folderLockBusy = false
        if retrying({ flock(file.descriptor, LOCK_EX | LOCK_NB) }) != 0 {
            let error = errno
            guard error == EWOULDBLOCK || error == EAGAIN else {
                file.close()
                return .failed(Reason(text: "the lock file in \(file.folder) could not be locked (errno \(error))", fallsBack: false))
            }
            guard heldByAnotherUser(file.descriptor) else { return .busy(file) }
        }
        switch replaceOpenToOthers(file) {
        case .busy:
            // Another process of the user's is replacing it (or another user holds the folder's
            // lock, and `/proc/locks` cannot tell): waited for, and named at the deadline.
            _ = retrying { flock(file.descriptor, LOCK_UN) }
            var waiting = file
            waiting.folderLockBusy = true
            return .busy(waiting)
        case .gone:
            file.close()
            return .replaced
        case .failed(let reason):
            file.close()
            return .failed(reason)
        case .replaced(let fresh):
            // Closing the old file lets go of its lock: whoever locks it next finds its name gives
            // another file, and opens the new one.
            _ = closeDescriptor(file.descriptor)
            return lock(File(descriptor: fresh, directory: file.directory, name: file.name, folder: file.folder))
        }
    }

    /// What became of replacing a lock file others could open.
    enum Replacement {
        /// A new file has the name: its descriptor.
        case replaced(Int32)
        /// Another process of the user's is replacing it now.
        case busy
        /// The name no longer gives the file (another process replaced or removed it).
        case gone
        /// The new file could not be made: why.
        case failed(Reason)
    }

    /// Puts a new, empty 0600 file in place of `file` (which others could open): made under a
    /// random name in the same folder (`O_EXCL`, never through a link) and renamed over it.
    /// Replacements are made one at a time, under a lock on the folder's descriptor, and only
    /// while the name still gives `file`, so that no process replaces a new file another process
    /// of the user's has put in place and locked. `file` stays open; the caller may replace it
    /// only when no process of the user's can hold its lock.
    static func replaceOpenToOthers(_ file: File) -> Replacement {
        guard retrying({ flock(file.directory, LOCK_EX | LOCK_NB) }) == 0 else {
            let error = errno
            // Another user who opened the folder while it was open to them can hold its lock for
            // ever: no replacement can then be made safely, and waiting would only end at the
            // deadline. Said at once, with the fix (a new file takes no replacement).
            if error == EWOULDBLOCK || error == EAGAIN, heldByAnotherUser(file.directory) {
                let path = "\(file.folder)/\(file.name)"
                return .failed(
                    Reason(
                        text:
                            "\(path) is open to other users and cannot be replaced: its folder \(file.folder) is locked by another user's process, "
                            + "which opened the folder while it was open to them: once no process of yours is renewing the token, "
                            + "remove the file (`rm \(path)`)",
                        fallsBack: false))
            }
            return .busy
        }
        defer { _ = retrying { flock(file.directory, LOCK_UN) } }
        var held = stat()
        var named = stat()
        guard retrying({ fstat(file.descriptor, &held) }) == 0,
            retrying({ fstatat(file.directory, file.name, &named, AT_SYMLINK_NOFOLLOW) }) == 0,
            held.st_dev == named.st_dev, held.st_ino == named.st_ino
        else { return .gone }
        var generator = SystemRandomNumberGenerator()
        let temporary = ".\(file.name).\(String(generator.next() as UInt64, radix: 16)).new"
        let fresh = retrying { openat(file.directory, temporary, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600) }
        guard fresh >= 0 else {
            return .failed(Self.unreplaceable(file, errno))
        }
        guard retrying({ fchmod(fresh, 0o600) }) == 0,
            retrying({ renameat(file.directory, temporary, file.directory, file.name) }) == 0
        else {
            let error = errno
            _ = unlinkat(file.directory, temporary, 0)
            _ = closeDescriptor(fresh)
            return .failed(Self.unreplaceable(file, error))
        }
        return .replaced(fresh)
    }

    /// Why a lock file others could open was not replaced.
    private static func unreplaceable(_ file: File, _ error: Int32) -> Reason {
        Reason(text: "the lock file in \(file.folder) is open to other users and could not be replaced (errno \(error))", fallsBack: false)
    }

    /// Whether the lock on the file (or folder) open as `descriptor` is held, as far as `/proc/locks` tells,
    /// only by processes of other users (blocking: on the lock's own thread): each `FLOCK` entry
    /// on the file names a process whose real and effective users (`/proc/<pid>/status`) are
    /// others. False whenever it cannot be told (no `/proc`, no entry, a holder this process
    /// cannot see or in another PID namespace): the holder is then taken to be a process of the
    /// user's, and waited for.
    static func heldByAnotherUser(_ descriptor: Int32) -> Bool {
        var status = stat()
        guard retrying({ fstat(descriptor, &status) }) == 0,
            let table = try? String(contentsOfFile: "/proc/locks", encoding: .utf8)
        else { return false }
        let device = UInt64(status.st_dev)
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
        let minor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
        let file = String(format: "%02llx:%02llx:%llu", major, minor, UInt64(status.st_ino))
        var holders: [Int32] = []
        for line in table.split(separator: "\n") {
            // `1: FLOCK  ADVISORY  WRITE 1234 fe:00:5678 0 EOF`; a waiter's line has `->`.
            let fields = line.split(separator: " ")
            guard fields.count >= 6, fields[1] == "FLOCK", fields[5] == file else { continue }
            guard let pid = Int32(fields[4]), pid > 0 else { return false }
            holders.append(pid)
        }
        guard !holders.isEmpty else { return false }
        let user = geteuid()
        for pid in holders {
            // A holder not seen (`hidepid`, a process that ended and left the lock to a child, a
            // PID of another namespace on an old kernel) is not known to be another user's.
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return false }
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Uid:") }) else { return false }
            let ids = line.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst().compactMap { UInt32($0) }
            guard ids.count >= 2, ids[1] != user, ids[0] != user else { return false }
        }
        return true
    }
}
