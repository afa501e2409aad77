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

/// The advisory file lock the processes of one user share around a service's refresh token: a
/// renewal (read the refresh token, spend it, store the rotated one) and a logout (revoke it,
/// delete it) hold it, so that two processes never spend one refresh token and a logout is never
/// undone by a renewal that was already under way.
///
/// The lock is `flock(2)` on a file per service, `oauth2-refresh-<digest of the service>.lock`, in
/// the first folder of these that can be used: `.local/state/resourceful/locks` in the home folder
/// the user database gives the user (`getpwuid_r(geteuid())`: a state folder, which no cache
/// cleaner empties), else `/tmp/resourceful-<uid>` (a user without a usable home folder, or
/// without an entry in the user database, as in some containers), and then in each later folder
/// of these that can be used, in that order: a process that locks in the home folder also waits
/// for one that fell back to `/tmp` while the home folder was unsafe (it may be made safe while
/// that process's token request is out). Neither depends on the
/// environment (`$HOME`, `$XDG_RUNTIME_DIR`, `$XDG_STATE_HOME`): every process of the user must
/// find the same file, whatever its environment says. The folder must be the user's own and open
/// to no one else (a lock folder with any group or other permission fails the lock, naming the
/// folder and the `chmod` that fixes it, rather than being used or passed over), and every folder
/// above it the user's or root's and writable by no one else unless sticky (a folder another
/// user could rename or replace is not used: the next one is tried). A lock folder that is
/// there but is not the user's own folder (another user made `/tmp/resourceful-<uid>` first; a
/// file, a link of another user's, one the user may not open) fails the lock, naming the folder
/// and the fix, rather than being passed over: a renewal never runs without a lock because
/// another user planted something. The file is created with mode 0600, never through a symbolic
/// link, and checked with `fstat` on its descriptor to be a regular file of the user's. A lock
/// file others could open (a `chmod -R` of the home folder) is replaced by a new 0600 file
/// renamed over it, not narrowed: whoever opened it while it was open to them keeps that
/// descriptor, and could hold the old file's lock for ever. It is replaced only when no process
/// of the user's can hold its lock: this process holds it, or `/proc/locks` shows that its holder
/// is a process of another user (replaced at once); a holder that may be the user's (a renewal
/// under way when the file was made readable) is waited for as any busy lock, until the deadline.
///
/// The file is never removed (removing a lock file lets two processes lock two files); when
/// something else removes or replaces it, a lock taken on the old file is let go and the file the
/// name now gives is locked instead, and a holder checks that the name still gives the file it
/// holds (``Claim/confirmed(until:)``) right before it spends a refresh token and again before it
/// stores the new one. What a file lock cannot do: a lock file removed (by hand, by a cleaner)
/// while a holder's token request is already out lets another process lock a new file and spend
/// the same refresh token; the store then tells which rotation came last (a rotated token is
/// stored only while the one spent is still stored), and a server that revokes a reused token's
/// family logs the user out. Only a folder that is absent or unsafe makes the next one be tried: a
/// passing failure (no descriptor left, a file the user may not open) fails the lock, since
/// other processes would not share a lock in another folder. Every account of a
/// service shares the service's lock: a renewal for one account may wait for another's.
///
/// The lock is taken without blocking a thread of the cooperative pool: the file is opened and
/// locked (`LOCK_NB`, polled with a growing pause) on a thread of its own, and only until the
/// deadline given, so that a file system that does not answer costs a wait until the deadline.
struct RefreshLock: ~Copyable {
    /// The files locked: the first folder's, then each later folder's that can be used.
    private let files: [Locked]
    /// The later folders passed over when the lock was taken (no process could lock in them then).
    private let skipped: [String]

    private init(files: [Locked], skipped: [String] = []) {
        self.files = files
        self.skipped = skipped
    }

    /// What lets a holder check that the lock is still the one other processes take: good only
    /// while the lock is held (its descriptors are closed with it).
    var claim: Claim {
        Claim(files: files, skipped: skipped)
    }

    /// A locked file: its descriptor, its folder and its name there.
    struct Locked: Sendable {
        /// The locked descriptor (open while the lock is held).
        let descriptor: Int32
        /// The folder the file was locked in.
        let folder: String
        /// The file's name in it.
        let name: String

        /// Closes the descriptor, letting go of its lock.
        func release() {
            _ = closeDescriptor(descriptor)
        }
    }

    /// A held lock's files: whether each name still gives the file locked.
    struct Claim: Sendable {
        /// The files locked, the first folder's first.
        let files: [Locked]
        /// The later folders passed over when the lock was taken.
        var skipped: [String] = []

        /// Whether each folder, walked again from `/`, still holds the locked file under its name,
        /// as other processes would find it, and each folder passed over still holds no lock file
        /// another process could lock (a full `/tmp` emptied, another user's folder removed, while
        /// the home folder became unusable): `false` when a file was removed, renamed or replaced,
        /// or a folder passed over can now be locked in (another process may then hold a lock
        /// this one does not), or when this cannot be checked by `deadline`.
        func confirmed(until deadline: ContinuousClock.Instant) async -> Bool {
            let (files, skipped) = (files, skipped)
            let outcome = await OffPoolWork.run(until: deadline, abandon: { (_: Bool) in }) {
                let named = files.allSatisfy { file in
                    (try? RefreshLock.names(file.descriptor, name: file.name, in: file.folder).get()) ?? false
                }
                guard named, let name = files.first?.name else { return named }
                return skipped.allSatisfy { folder in
                    guard case .success(let file) = RefreshLock.openFile(named: name, in: folder) else { return true }
                    defer { file.close() }
                    return RefreshLock.isHeld(file.descriptor, among: files)
                }
            }
            if case .done(true) = outcome { return true }
            return false
        }
    }

    deinit {
        // Closing a descriptor releases its lock: the last folder's first.
        for file in files.reversed() { file.release() }
    }

    /// What became of an attempt to lock.
    enum Attempt: ~Copyable {
        /// The lock is held until the value is gone.
        case held(RefreshLock)
        /// No lock folder could be used (none known, or each absent and impossible to make, or unsafe
        /// on the way to it; never one that is there but another user's, which is ``failed(_:)``): why.
        case unavailable(String)
        /// The lock file could not be opened or locked for a passing reason (no descriptor left,
        /// a file the user may not open): why. Another folder is not tried.
        case failed(String)
        /// The deadline passed: another process held the lock (`opening` false), or opening the
        /// lock file had not finished (`opening` true: a file system that does not answer).
        case timedOut(opening: Bool)
        /// The task was cancelled while it waited.
        case cancelled
    }

    /// An open lock file: its descriptor, the descriptor of its folder and its name in it.
    struct File: Sendable {
        /// The lock file's descriptor.
        var descriptor: Int32
        /// The descriptor of the folder it was opened in.
        var directory: Int32
        /// Its name in `directory`.
        var name: String
        /// The folder's path, for messages.
        var folder: String
        /// Whether others could open the file (a `chmod -R` of the home folder left it so): it is
        /// replaced by a new 0600 file once its lock is had, or at once when another user holds
        /// its lock (``lockOpenToOthers(_:)``), never while a process of the user's may hold it.
        var openToOthers = false
        /// Whether replacing it waited for its folder's lock (``replaceOpenToOthers(_:)``), which
        /// another user who opened the folder while it was open to them can hold for ever.
        var folderLockBusy = false

        /// Closes both descriptors.
        func close() {
            _ = closeDescriptor(descriptor)
            _ = closeDescriptor(directory)
        }
    }

    /// Opens the lock file (blocking: it is called on a thread of its own).
    typealias Opener = @Sendable () -> Result<File, Reason>

    /// The longest pause between two attempts.
    static let maximumPause: Duration = .milliseconds(100)

    /// What one attempt on the lock's own thread came to.
    enum Step: Sendable {
        /// Locked: the lock file's descriptor, folder and name.
        case locked(Int32, folder: String, name: String)
        /// Another process holds the lock: the file, kept open for the next attempt.
        case busy(File)
        /// The file locked is no longer the one its name gives (removed or replaced): open again.
        case replaced
        /// No lock file can be had.
        case failed(Reason)

        /// Lets go of what the step holds (a step that came after the deadline).
        func release() {
            switch self {
            case .locked(let descriptor, _, _): _ = closeDescriptor(descriptor)
            case .busy(let file): file.close()
            case .replaced, .failed: break
            }
        }
    }

    /// What became of an attempt to lock one file (``take(deadline:opener:)``).
    enum Taken: Sendable {
        /// Locked: the file, whose descriptor the taker must close.
        case held(Locked)
        /// As ``Attempt/unavailable(_:)``.
        case unavailable(String)
        /// As ``Attempt/failed(_:)``; `holdsNoLock` when no process of the user can hold a lock
        /// in that folder (another user's, or one open to others: each process fails there).
        case failed(String, holdsNoLock: Bool)
        /// As ``Attempt/timedOut(opening:)``.
        case timedOut(opening: Bool)
        /// As ``Attempt/cancelled``.
        case cancelled
    }

    /// Locks the file of `service`, waiting for another process's lock at most until `deadline`;
    /// `opener` (a test's seam) opens one file, else the file is locked in the first of `folders`
    /// that can be used and then in each later one that can (``folders(accountHome:user:)``).
    ///
    /// Every process takes the locks in the same order, from the folder it uses to the last, so
    /// that processes which choose different folders still exclude each other: one that uses the
    /// home folder also waits for one that fell back to `/tmp/resourceful-<uid>` (the home folder
    /// was unsafe when it chose, and was made safe while its token request was out). A later
    /// folder no process of the user can lock in (absent and impossible to make, unsafe, another
    /// user's, a file that cannot be made for want of space) is passed over, and so is one that
    /// leads to a file already held (a link to the first); any other failure there fails the lock,
    /// as in the first.
    static func acquire(
        service: String, deadline: ContinuousClock.Instant, opener: Opener? = nil, folders: [String] = folders()
    ) async -> Attempt {
        if let opener { return attempt(await take(deadline: deadline, opener: opener), holding: []) }
        let first = await take(deadline: deadline, opener: { openFile(service: service, folders: folders) })
        guard case .held(let file) = first, let position = folders.firstIndex(of: file.folder) else {
            return attempt(first, holding: [])
        }
        var files = [file]
        var skipped: [String] = []
        for later in folders[(position + 1)...] {
            let (name, held) = (file.name, files)
            let taken = await take(deadline: deadline) {
                // A folder that leads to a file already held (a link to the home folder's lock
                // folder, a bind mount) would wait on this process's own lock: passed over.
                let opened = openFile(named: name, in: later)
                guard case .success(let file) = opened, Self.isHeld(file.descriptor, among: held) else { return opened }
                file.close()
                return .failure(Reason(text: "\(later) leads to a lock file already held"))
            }
            switch taken {
            case .held(let next): files.append(next)
            case .unavailable, .failed(_, holdsNoLock: true): skipped.append(later)
            case .failed, .timedOut, .cancelled: return attempt(taken, holding: files)
            }
        }
        let last = files.removeLast()
        return attempt(.held(last), holding: files, skipped: skipped)
    }

    /// Whether the file open as `descriptor` is one of `files` (same device and inode).
    static func isHeld(_ descriptor: Int32, among files: [Locked]) -> Bool {
        var opened = stat()
        guard retrying({ fstat(descriptor, &opened) }) == 0 else { return false }
        return files.contains { file in
            var held = stat()
            return retrying({ fstat(file.descriptor, &held) }) == 0 && held.st_dev == opened.st_dev && held.st_ino == opened.st_ino
        }
    }

    /// The attempt `taken` comes to, after the files already locked in earlier folders: held
    /// with all of them, else each of them let go.
    static func attempt(_ taken: Taken, holding files: [Locked], skipped: [String] = []) -> Attempt {
        let failure: Attempt
        switch taken {
        case .held(let file): return .held(RefreshLock(files: files + [file], skipped: skipped))
        case .unavailable(let reason): failure = .unavailable(reason)
        case .failed(let reason, _): failure = .failed(reason)
        case .timedOut(let opening): failure = .timedOut(opening: opening)
        case .cancelled: failure = .cancelled
        }
        for file in files.reversed() { file.release() }
        return failure
    }

    /// Locks the file `opener` opens, waiting for another process's lock at most until `deadline`.
    static func take(deadline: ContinuousClock.Instant, opener: @escaping Opener) async -> Taken {
        var kept: File?
        var pause: Duration = .milliseconds(2)
        var replacements = 0
        while true {
            // The file is moved to the attempt, which owns it from here on.
            let file = kept
            kept = nil
            let readable = file?.openToOthers == true
            let outcome = await OffPoolWork.run(
                until: deadline, notRun: { file?.close() }, abandon: { (step: Step) in step.release() }
            ) { () -> Step in
                let opened: File
                if let file {
                    opened = file
                } else {
                    switch opener() {
                    case .success(let file): opened = file
                    case .failure(let reason): return .failed(reason)
                    }
                }
                return lock(opened)
            }
            switch outcome {
            case .timedOut: return readable ? Self.heldReadable(file) : .timedOut(opening: file == nil)
            case .cancelled: return .cancelled
            case .done(.locked(let descriptor, let folder, let name)):
                return .held(Locked(descriptor: descriptor, folder: folder, name: name))
            case .done(.failed(let reason)):
                return reason.fallsBack ? .unavailable(reason.text) : .failed(reason.text, holdsNoLock: reason.holdsNoLock)
            case .done(.replaced):
                // Removed or replaced while another process held it: the name's file now.
                replacements += 1
                if replacements < 3 { continue }
            case .done(.busy(let file)):
                kept = file
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero else {
                defer { kept?.close() }
                return kept?.openToOthers == true ? Self.heldReadable(kept) : .timedOut(opening: false)
            }
            do {
                try await Task.sleep(for: min(pause, left))
            } catch {
                kept?.close()
                return .cancelled
            }
            pause = min(pause * 2, maximumPause)
        }
    }

    /// The failure of a wait that ended at the deadline on a lock file others could open: its
    /// holder may be another user's process (one this process cannot see), holding it for ever.
    static func heldReadable(_ file: File?) -> Taken {
        let path = file.map { "\($0.folder)/\($0.name)" } ?? "the lock file"
        if let file, file.folderLockBusy {
            return .failed(
                "\(path) was open to other users, and could not be replaced: its folder \(file.folder) was locked until the deadline, "
                    + "perhaps by another user who opened the folder while it was open to them: "
                    + "once no process of yours is renewing the token, remove the file (`rm \(path)`)", holdsNoLock: false)
        }
        return .failed(
            "\(path) was open to other users, and its lock was held until the deadline, perhaps by another user: "
                + "once no process of yours is renewing the token, remove it (`rm \(path)`)", holdsNoLock: false)
    }

    /// Tries to lock `file` without waiting (blocking on the file system: called on the lock's
    /// own thread), then checks that the file locked is still the one its name gives, its folder
    /// walked again from `/` (a folder renamed away holds a file no other process finds).
    static func lock(_ file: File) -> Step {
        if file.openToOthers { return lockOpenToOthers(file) }
        while flock(file.descriptor, LOCK_EX | LOCK_NB) != 0 {
            let error = errno
            if error == EINTR { continue }
            if error == EWOULDBLOCK || error == EAGAIN { return .busy(file) }
            file.close()
            return .failed(Reason(text: "the lock file in \(file.folder) could not be locked (errno \(error))", fallsBack: false))
        }
        switch names(file.descriptor, name: file.name, in: file.folder) {
        case .success(true):
            _ = closeDescriptor(file.directory)
            return .locked(file.descriptor, folder: file.folder, name: file.name)
        case .success(false):
            file.close()
            return .replaced
        case .failure(let reason):
            file.close()
            return .failed(Reason(text: reason.text, fallsBack: false))
        }
    }

    /// Whether `name` in `folder` (walked from `/` as ``openFolder(_:creating:)`` does, creating
    /// nothing) is the file open as `descriptor` (blocking on the file system): `false` when the
    /// name is gone or gives another file; a failure when it cannot be checked.
    static func names(_ descriptor: Int32, name: String, in folder: String) -> Result<Bool, Reason> {
        var held = stat()
        guard retrying({ fstat(descriptor, &held) }) == 0 else {
            return .failure(Reason(text: "the lock file in \(folder) could not be checked (errno \(errno))", fallsBack: false))
        }
        let directory: Int32
        switch openFolder(folder, creating: false) {
        case .success(let opened): directory = opened
        case .failure(let reason):
            // A folder that is gone is a file that is gone; one that cannot be walked safely now
            // cannot be vouched for.
            return reason.missing ? .success(false) : .failure(reason)
        }
        defer { _ = closeDescriptor(directory) }
        var named = stat()
        guard retrying({ fstatat(directory, name, &named, AT_SYMLINK_NOFOLLOW) }) == 0 else {
            let error = errno
            if error == ENOENT { return .success(false) }
            return .failure(Reason(text: "the lock file in \(folder) could not be checked (errno \(error))", fallsBack: false))
        }
        return .success(held.st_dev == named.st_dev && held.st_ino == named.st_ino)
    }

    /// Why no lock file could be used.
    struct Reason: Error {
        /// What went wrong, naming the folder.
        var text: String
        /// Whether the next folder may be tried: the folder is absent or unsafe (true), not a
        /// passing failure that other processes would not share (false).
        var fallsBack = true
        /// Whether a folder on the way does not exist (and was not to be made).
        var missing = false
        /// Whether no process of the user can hold a lock in the folder (another user's, or one
        /// open to others): every process that comes to it fails there.
        var holdsNoLock = false
    }
}

/// Calls `call` again while it fails with `EINTR`.
func retrying(_ call: () -> Int32) -> Int32 {
    while true {
        let result = call()
        if result >= 0 || errno != EINTR { return result }
    }
}

/// Closes `descriptor` (the C function, which `RefreshLock.File.close()` hides).
func closeDescriptor(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}
