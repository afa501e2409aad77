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
/// without an entry in the user database, as in some containers). Neither depends on the
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
    /// The locked descriptor.
    private let descriptor: Int32
    /// The folder and name the file was locked under.
    private let folder: String
    private let name: String

    private init(descriptor: Int32, folder: String, name: String) {
        self.descriptor = descriptor
        self.folder = folder
        self.name = name
    }

    /// What lets a holder check that the lock is still the one other processes take: good only
    /// while the lock is held (its descriptor is closed with it).
    var claim: Claim {
        Claim(descriptor: descriptor, folder: folder, name: name)
    }

    /// A held lock's file, by descriptor, folder and name: whether the name still gives the file
    /// locked.
    struct Claim: Sendable {
        /// The locked descriptor (open while the lock is held).
        let descriptor: Int32
        /// The folder the file was locked in.
        let folder: String
        /// The file's name in it.
        let name: String

        /// Whether `folder`, walked again from `/`, still holds the locked file under its name, as
        /// other processes would find it, and is still the first folder they can use: `false` when
        /// the file was removed, renamed or replaced (another process may then hold a lock on the
        /// new file), when a folder before it can be used again (a home folder made safe again:
        /// other processes lock there now), or when this cannot be checked by `deadline`.
        func confirmed(until deadline: ContinuousClock.Instant) async -> Bool {
            let claim = self
            let outcome = await OffPoolWork.run(until: deadline, abandon: { (_: Bool) in }) {
                guard (try? RefreshLock.names(claim.descriptor, name: claim.name, in: claim.folder).get()) ?? false else { return false }
                return RefreshLock.isFirstUsable(claim.folder, name: claim.name)
            }
            if case .done(true) = outcome { return true }
            return false
        }
    }

    deinit {
        // Closing the descriptor releases the lock.
        close(descriptor)
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

    /// Locks the file of `service`, waiting for another process's lock at most until `deadline`;
    /// `opener` (a test's seam) opens the file, by default in the first folder that can be used.
    static func acquire(service: String, deadline: ContinuousClock.Instant, opener: Opener? = nil) async -> Attempt {
        let opener = opener ?? { openFile(service: service) }
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
                return .held(RefreshLock(descriptor: descriptor, folder: folder, name: name))
            case .done(.failed(let reason)): return reason.fallsBack ? .unavailable(reason.text) : .failed(reason.text)
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
    static func heldReadable(_ file: File?) -> Attempt {
        let path = file.map { "\($0.folder)/\($0.name)" } ?? "the lock file"
        if let file, file.folderLockBusy {
            return .failed(
                "\(path) was open to other users, and could not be replaced: its folder \(file.folder) was locked until the deadline, "
                    + "perhaps by another user who opened the folder while it was open to them: "
                    + "once no process of yours is renewing the token, remove the file (`rm \(path)`)")
        }
        return .failed(
            "\(path) was open to other users, and its lock was held until the deadline, perhaps by another user: "
                + "once no process of yours is renewing the token, remove it (`rm \(path)`)")
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
    }

    /// The name of `service`'s lock file: a digest, so that any service name makes a file name.
    static func fileName(service: String) -> String {
        let digest = SHA256.hash(data: Data(service.utf8))
        return "oauth2-refresh-" + digest.prefix(16).map { String(format: "%02x", $0) }.joined() + ".lock"
    }

    /// The folders a lock file may be in, in the order they are tried, the same for every process
    /// of `user` whatever its environment: the state folder in `accountHome` (the home folder of
    /// the user database), then `/tmp/resourceful-<uid>` (`/tmp` is sticky: no one else can rename
    /// or replace the user's folder in it; one someone else made first fails the lock, naming the
    /// fix: ``openFolder(_:creating:)``).
    static func folders(accountHome: String? = accountHome(), user: uid_t = geteuid()) -> [String] {
        var folders: [String] = []
        if let home = accountHome, home.hasPrefix("/") {
            folders.append((home.hasSuffix("/") ? String(home.dropLast()) : home) + "/.local/state/resourceful/locks")
        }
        folders.append("/tmp/resourceful-\(user)")
        var seen = Set<String>()
        return folders.filter { seen.insert($0).inserted }
    }

    /// The home folder the user database gives the effective user (`getpwuid_r`), whatever the
    /// environment says (`HOME`, `CFFIXED_USER_HOME`); nil when it gives none.
    static func accountHome() -> String? {
        var size = sysconf(Int32(_SC_GETPW_R_SIZE_MAX))
        if size <= 0 { size = 16_384 }
        while true {
            var buffer = [CChar](repeating: 0, count: size)
            var code: Int32 = 0
            let home: String? = buffer.withUnsafeMutableBufferPointer { storage in
                guard let base = storage.baseAddress else { return nil }
                var entry = passwd()
                var found: UnsafeMutablePointer<passwd>?
                code = getpwuid_r(geteuid(), &entry, base, storage.count, &found)
                guard code == 0, found != nil, let directory = entry.pw_dir else { return nil }
                return String(cString: directory)
            }
            if code == EINTR { continue }
            if code == ERANGE, size < 1 << 20 {
                size *= 2
                continue
            }
            return home
        }
    }

    /// Whether no folder before `folder` in ``folders(accountHome:user:)`` would hold the lock
    /// file `name` now, as ``openFile(service:folders:)`` asks each in turn: the one other
    /// processes lock in is still `folder`. A folder before it whose lock file cannot be opened
    /// (unsafe, read-only, not a regular file) is passed over by them too, and so is one that
    /// fails for a passing reason (their locking then fails).
    static func isFirstUsable(_ folder: String, name: String, folders: [String] = folders()) -> Bool {
        // A folder chosen otherwise (by a test) is not one the processes choose among.
        guard let position = folders.firstIndex(of: folder) else { return true }
        for candidate in folders[..<position] {
            if case .success(let file) = openFile(named: name, in: candidate) {
                file.close()
                return false
            }
        }
        return true
    }

    /// A descriptor of `service`'s lock file, opened read-write in the first folder that can be
    /// used; a passing failure in one folder fails without trying the next.
    static func openFile(service: String, folders: [String] = folders()) -> Result<File, Reason> {
        guard !folders.isEmpty else {
            return .failure(Reason(text: "no folder for lock files is known"))
        }
        var tried: [String] = []
        for folder in folders {
            switch openFile(named: fileName(service: service), in: folder) {
            case .success(let file): return .success(file)
            case .failure(let reason) where !reason.fallsBack: return .failure(reason)
            case .failure(let reason): tried.append(reason.text)
            }
        }
        return .failure(Reason(text: tried.joined(separator: "; ")))
    }

    /// Whether a failure with `error` means the place is absent or unsafe, so that the next folder
    /// may be tried (`existing`: the lock file itself, which the user may not be denied).
    static func fallsBack(_ error: Int32, existing: Bool = false) -> Bool {
        switch error {
        // A full file system is passing, and one another user can cause (filling `/tmp`).
        case EMFILE, ENFILE, ENOMEM, EIO, EINTR, EAGAIN, ETIMEDOUT, ENOSPC, EDQUOT: return false
        case EACCES, EPERM: return !existing
        default: return true
        }
    }

    /// Opens (creating it, 0600) the lock file `name` in `folder` (each missing folder created
    /// 0700): the file a regular file of the user's, for the user alone (one that others could
    /// open, as a `chmod -R` of the home folder leaves, is replaced: ``lockOpenToOthers(_:)``),
    /// never reached through a symbolic link; the folder and each folder above it checked as in
    /// ``openFolder(_:creating:)``. The file comes with the descriptor of its folder.
    static func openFile(named name: String, in folder: String) -> Result<File, Reason> {
        let directory: Int32
        switch openFolder(folder) {
        case .success(let opened): directory = opened
        case .failure(let reason): return .failure(reason)
        }
        let descriptor = retrying { openat(directory, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600) }
        guard descriptor >= 0 else {
            let error = errno
            _ = closeDescriptor(directory)
            return .failure(
                Reason(text: "the lock file in \(folder) cannot be opened (errno \(error))", fallsBack: fallsBack(error, existing: true))
            )
        }
        var status = stat()
        guard retrying({ fstat(descriptor, &status) }) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_uid == geteuid() else {
            _ = closeDescriptor(descriptor)
            _ = closeDescriptor(directory)
            return .failure(Reason(text: "the lock file in \(folder) is not a regular file of the user's"))
        }
        // Anyone who could open the file may hold a descriptor of it still, and with it its lock
        // for ever: a new file takes its name, once that cannot take it from under a process of
        // the user's (``lockOpenToOthers(_:)``).
        return .success(
            File(descriptor: descriptor, directory: directory, name: name, folder: folder, openToOthers: status.st_mode & 0o077 != 0))
    }

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

    /// A descriptor of `folder`, reached from `/` one folder at a time without a race (ssh's rule
    /// for the files it trusts): every folder on the way owned by the user or by root and writable
    /// by no one else unless it is sticky (as `/tmp` is), so that no other user can rename a folder
    /// away or put one of theirs in its place; `folder` itself the user's own and writable by no
    /// one else, and open to no one else: a lock folder of the user's with any group or other
    /// permission is refused without trying another folder (other processes could be using it),
    /// saying how to fix it, and so is a lock folder that is there but is not a folder of the
    /// user's (another user's, a file, another user's link, one the user may not open: another
    /// user may have made it first, and passing it over could leave no lock at all). A missing
    /// folder is created, 0700, when `creating` (else it is a failure marked ``Reason/missing``).
    /// A symbolic link on the way is followed only when the user or root owns it.
    static func openFolder(_ folder: String, creating: Bool = true) -> Result<Int32, Reason> {
        let refused = { (why: String, error: Int32?) in
            Result<Int32, Reason>.failure(
                Reason(
                    text: "the lock folder \(folder) cannot be used: \(why)", fallsBack: error.map { fallsBack($0) } ?? true,
                    missing: error == ENOENT))
        }
        // The lock folder itself there but not usable as the user's: another user may have made it
        // (`/tmp/resourceful-<uid>` before the user did). Not passed over: without it no lock is
        // left that the user's processes share, and they would renew without one.
        let foreign = { (why: String) in
            Result<Int32, Reason>.failure(
                Reason(
                    text:
                        "the lock folder \(folder) \(why): another user may have made it, and renewing without it could spend a refresh token twice; "
                        + "have it removed (as root if need be: `sudo rm -r \(folder)`), or give the user a home folder of their own",
                    fallsBack: false))
        }
        guard folder.hasPrefix("/") else { return refused("it is not an absolute path", nil) }
        let user = geteuid()
        var pending = folder.split(separator: "/").map(String.init)
        var walked: [String] = []
        var directory = retrying { open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        var links = 0
        var status = stat()
        guard directory >= 0 else { return refused("/ cannot be opened (errno \(errno))", errno) }
        while true {
            // The folder reached so far (`walked`), checked on its descriptor.
            guard retrying({ fstat(directory, &status) }) == 0 else {
                let error = errno
                _ = closeDescriptor(directory)
                return refused("errno \(error)", error)
            }
            let place = "/" + walked.joined(separator: "/")
            if pending.isEmpty {
                guard status.st_uid == user else {
                    _ = closeDescriptor(directory)
                    return foreign("exists but is not the user's own")
                }
                guard status.st_mode & 0o077 == 0 else {
                    // The user's, so perhaps the one other processes lock in: not passed over.
                    let mode = String(status.st_mode & 0o7777, radix: 8)
                    _ = closeDescriptor(directory)
                    return .failure(
                        Reason(
                            text:
                                "the lock folder \(folder) is open to other users (mode \(mode)): make it the user's alone with `chmod 700 \(folder)`",
                            fallsBack: false))
                }
                return .success(directory)
            }
            let sticky = status.st_mode & S_ISVTX != 0
            guard status.st_uid == user || status.st_uid == 0, status.st_mode & 0o022 == 0 || sticky else {
                _ = closeDescriptor(directory)
                return refused("\(place) belongs to another user, or others may write to it", nil)
            }
            let name = pending.removeFirst()
            if name == "." { continue }
            if name == ".." {
                // The folders walked are real ones, so the one above is the previous step:
                // start again from `/`, checking each.
                _ = walked.popLast()
                pending = walked + pending
                walked = []
                _ = closeDescriptor(directory)
                directory = retrying { open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
                guard directory >= 0 else { return refused("/ cannot be opened (errno \(errno))", errno) }
                continue
            }
            let parent = directory
            // Whether `name` is the lock folder itself.
            let last = pending.isEmpty
            var next = retrying { openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
            if next < 0, errno == ENOENT, creating {
                if retrying({ mkdirat(parent, name, 0o700) }) != 0, errno != EEXIST {
                    let error = errno
                    _ = closeDescriptor(directory)
                    return refused("\(place)/\(name) cannot be created (errno \(error))", error)
                }
                next = retrying { openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
            }
            if next < 0, errno == ELOOP || errno == ENOTDIR {
                // A symbolic link, followed only when the user or root made it (in a folder
                // already checked, so no one else can replace it); read on the descriptor.
                var link = stat()
                var target = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
                let length = readlinkat(directory, name, &target, Int(PATH_MAX))
                guard fstatat(directory, name, &link, AT_SYMLINK_NOFOLLOW) == 0, link.st_mode & S_IFMT == S_IFLNK,
                    link.st_uid == user || link.st_uid == 0, length > 0, links < 16
                else {
                    _ = closeDescriptor(directory)
                    if last { return foreign("exists but is not a folder, or is a symbolic link of another user's") }
                    return refused("\(place)/\(name) is not a folder, or a symbolic link of another user's", nil)
                }
                links += 1
                let destination = String(decoding: target[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                let parts = destination.split(separator: "/").map(String.init)
                pending = (destination.hasPrefix("/") ? parts : walked + parts) + pending
                walked = []
                _ = closeDescriptor(directory)
                directory = retrying { open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
                guard directory >= 0 else { return refused("/ cannot be opened (errno \(errno))", errno) }
                continue
            }
            guard next >= 0 else {
                let error = errno
                _ = closeDescriptor(directory)
                if last, error == EACCES || error == EPERM { return foreign("exists but the user may not open it (errno \(error))") }
                return refused("\(place)/\(name) cannot be opened (errno \(error))", error)
            }
            _ = closeDescriptor(directory)
            directory = next
            walked.append(name)
        }
    }
}

/// Calls `call` again while it fails with `EINTR`.
private func retrying(_ call: () -> Int32) -> Int32 {
    while true {
        let result = call()
        if result >= 0 || errno != EINTR { return result }
    }
}

/// Closes `descriptor` (the C function, which `RefreshLock.File.close()` hides).
private func closeDescriptor(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}

extension OAuth2AuthenticationStorage {
    /// What to do when another process holds the lock until the deadline.
    enum LockWait {
        /// Fail with ``OAuth2Error/Kind/unreachable``: a renewal.
        case fail
        /// Go on without it (`body` is told): a logout, which then says it cannot be sure.
        case proceed
    }

    /// Whether a body runs holding the lock, and if not, why.
    enum LockHold: Sendable {
        /// It holds the lock: what checks that it still does.
        case held(RefreshLock.Claim)
        /// It does not: why, said as "the lock … could not be …" to end a sentence.
        case notHeld(String)

        /// Whether the lock is held.
        var isHeld: Bool {
            if case .held = self { return true }
            return false
        }

        /// Whether the lock is held and its file is still the one other processes lock (not
        /// removed or replaced since it was taken), checked by `deadline`.
        func confirmed(until deadline: ContinuousClock.Instant) async -> Bool {
            guard case .held(let claim) = self else { return false }
            return await claim.confirmed(until: deadline)
        }
    }

    /// Runs `body` holding `service`'s ``RefreshLock``, waiting for another process (and for a
    /// file system that does not answer) at most until `deadline`; `body` is told whether it
    /// holds the lock. No usable lock folder (each absent and impossible to make, or unsafe on the
    /// way; logged at warning) means `body` runs without it; a lock folder another user made or
    /// holds, one open to others, or a lock file that cannot be opened in time or for a passing
    /// reason fails a renewal (`wait` `.fail`) with ``OAuth2Error/Kind/unreachable``.
    func withRefreshLock<T: Sendable>(
        for service: String,
        deadline: ContinuousClock.Instant,
        orElse wait: LockWait,
        _ body: (_ hold: LockHold) async throws(OAuth2Error) -> T
    ) async throws(OAuth2Error) -> T {
        switch await RefreshLock.acquire(service: service, deadline: deadline, opener: lockOpener) {
        case .held(let lock):
            let result: Result<T, OAuth2Error>
            do throws(OAuth2Error) {
                result = .success(try await body(.held(lock.claim)))
            } catch {
                result = .failure(error)
            }
            _ = consume lock
            return try result.get()
        case .unavailable(let reason):
            logger.warning(
                "OAuth 2 refresh tokens are used without a lock shared with other processes",
                metadata: ["service": "\(service)", "reason": "\(reason)"]
            )
            return try await body(.notHeld("no folder for the lock other processes renew it under could be used (\(reason))"))
        case .failed(let reason):
            guard wait == .proceed else {
                throw OAuth2Error(
                    .unreachable, "the lock other processes renew the token of '\(service)' under could not be taken: \(reason)")
            }
            return try await body(.notHeld("the lock other processes renew it under could not be taken (\(reason))"))
        case .timedOut(opening: true):
            guard wait == .proceed else {
                throw OAuth2Error(
                    .unreachable,
                    "the lock file other processes renew the token of '\(service)' under could not be opened before the deadline"
                )
            }
            return try await body(.notHeld("the lock file other processes renew it under could not be opened in time"))
        case .timedOut(opening: false):
            guard wait == .proceed else {
                throw OAuth2Error(.unreachable, "another process was renewing the token of '\(service)' until the deadline")
            }
            return try await body(.notHeld("the lock other processes renew it under could not be had in time"))
        case .cancelled:
            throw OAuth2Error(.unreachable, "'\(service)': cancelled while waiting for another process's token renewal")
        }
    }
}
