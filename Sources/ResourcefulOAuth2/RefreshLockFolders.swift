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

    /// Whether a failure with `error` means that a file or folder was not there to open and could
    /// not be made (no space, no quota left): no process holds a lock on a file that does not
    /// exist, so a later folder that fails so is passed over (``acquire(service:deadline:opener:folders:)``),
    /// whoever filled the file system.
    static func couldNotBeMade(_ error: Int32) -> Bool {
        error == ENOSPC || error == EDQUOT
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
                Reason(
                    text: "the lock file in \(folder) cannot be opened (errno \(error))", fallsBack: fallsBack(error, existing: true),
                    holdsNoLock: Self.couldNotBeMade(error))
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
                    missing: error == ENOENT, holdsNoLock: error.map(couldNotBeMade) ?? false))
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
                    fallsBack: false, holdsNoLock: true))
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
                            fallsBack: false, holdsNoLock: true))
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
