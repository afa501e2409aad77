import Crypto
import Foundation
import Logging

#if canImport(Glibc)
    // `struct stat`'s members are visible through the module that declares it first in this
    // target's module graph: Dispatch's C headers include it before Glibc does.
    import CDispatch
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
/// the first folder of these that can be used: `.cache/resourceful/locks` in the home folder the
/// user database gives the user (not `$HOME`: every process of the user must find the same file,
/// whatever its environment), else `$XDG_RUNTIME_DIR/resourceful`, else
/// `$HOME/.cache/resourceful/locks`. The folder must be the
/// user's own and writable by no one else, and every folder above it the user's or root's and
/// writable by no one else unless sticky (a folder another user could rename or replace is not
/// used: the next one is tried); the file is created with mode 0600, never through a
/// symbolic link, checked with `fstat` on its descriptor to be a regular file of the user's, and
/// narrowed to 0600 when others could open it. It
/// is never removed (removing a lock file lets two processes lock two files). Every account of a
/// service shares the service's lock: a renewal for one account may wait for another's.
///
/// The lock is taken without blocking a thread (`LOCK_NB`, polled with a growing pause) and only
/// until the deadline given.
struct RefreshLock: ~Copyable {
    /// The locked descriptor.
    private let descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        // Closing the descriptor releases the lock.
        close(descriptor)
    }

    /// What became of an attempt to lock.
    enum Attempt: ~Copyable {
        /// The lock is held until the value is gone.
        case held(RefreshLock)
        /// No lock file could be used (no such folder, another user's file, a symbolic link): why.
        case unavailable(String)
        /// Another process held the lock until the deadline.
        case timedOut
        /// The task was cancelled while it waited.
        case cancelled
    }

    /// The longest pause between two attempts.
    static let maximumPause: Duration = .milliseconds(100)

    /// Locks the file of `service`, waiting for another process's lock at most until `deadline`.
    static func acquire(service: String, deadline: ContinuousClock.Instant) async -> Attempt {
        let descriptor: Int32
        switch openFile(service: service) {
        case .success(let opened): descriptor = opened
        case .failure(let reason): return .unavailable(reason.text)
        }
        var pause: Duration = .milliseconds(2)
        while true {
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return .held(RefreshLock(descriptor: descriptor)) }
            let error = errno
            if error == EINTR { continue }
            guard error == EWOULDBLOCK || error == EAGAIN else {
                close(descriptor)
                return .unavailable("the lock file could not be locked (errno \(error))")
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero else {
                close(descriptor)
                return .timedOut
            }
            do {
                try await Task.sleep(for: min(pause, left))
            } catch {
                close(descriptor)
                return .cancelled
            }
            pause = min(pause * 2, maximumPause)
        }
    }

    /// Why no lock file could be used.
    struct Reason: Error {
        var text: String
    }

    /// The name of `service`'s lock file: a digest, so that any service name makes a file name.
    static func fileName(service: String) -> String {
        let digest = SHA256.hash(data: Data(service.utf8))
        return "oauth2-refresh-" + digest.prefix(16).map { String(format: "%02x", $0) }.joined() + ".lock"
    }

    /// The folders a lock file may be in, in the order they are tried: first one that depends on
    /// the user alone (`accountHome`, the home folder of the user database), then the environment's.
    static func folders(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        accountHome: String? = FileManager.default.homeDirectory(forUser: NSUserName())?.path
    ) -> [String] {
        var folders: [String] = []
        if let home = accountHome, home.hasPrefix("/") { folders.append(home + "/.cache/resourceful/locks") }
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") { folders.append(runtime + "/resourceful") }
        if let home = environment["HOME"], home.hasPrefix("/") { folders.append(home + "/.cache/resourceful/locks") }
        var seen = Set<String>()
        return folders.filter { seen.insert($0).inserted }
    }

    /// A descriptor of `service`'s lock file, opened read-write in the first folder that can be used.
    private static func openFile(service: String) -> Result<Int32, Reason> {
        var last = Reason(text: "no folder for lock files is known (the user has no home folder, and neither XDG_RUNTIME_DIR nor HOME is set)")
        for folder in folders() {
            switch openFile(named: fileName(service: service), in: folder) {
            case .success(let descriptor): return .success(descriptor)
            case .failure(let reason): last = reason
            }
        }
        return .failure(last)
    }

    /// Opens (creating it, 0600) the lock file `name` in `folder` (each missing folder created
    /// 0700): the file a regular file of the user's, for the user alone (a mode that lets others
    /// open it, as a `chmod -R` of the home folder leaves, is narrowed to 0600 on the descriptor),
    /// never reached through a symbolic link; the folder and each folder above it checked as in
    /// ``openFolder(_:)``.
    static func openFile(named name: String, in folder: String) -> Result<Int32, Reason> {
        let directory: Int32
        switch openFolder(folder) {
        case .success(let opened): directory = opened
        case .failure(let reason): return .failure(reason)
        }
        defer { close(directory) }
        let descriptor = openat(directory, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return .failure(Reason(text: "the lock file in \(folder) cannot be opened (errno \(errno))")) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_uid == geteuid() else {
            close(descriptor)
            return .failure(Reason(text: "the lock file in \(folder) is not a regular file of the user's"))
        }
        // Anyone who can open the file can hold its lock, and so stop every renewal.
        if status.st_mode & 0o077 != 0, fchmod(descriptor, 0o600) != 0 {
            let error = errno
            close(descriptor)
            return .failure(Reason(text: "the lock file in \(folder) is open to other users and cannot be narrowed (errno \(error))"))
        }
        return .success(descriptor)
    }

    /// A descriptor of `folder`, reached from `/` one folder at a time without a race (ssh's rule
    /// for the files it trusts): every folder on the way owned by the user or by root and writable
    /// by no one else unless it is sticky (as `/tmp` is), so that no other user can rename a folder
    /// away or put one of theirs in its place; `folder` itself the user's own and writable by no
    /// one else. A missing folder is created, 0700. A symbolic link on the way is followed only
    /// when the user or root owns it.
    static func openFolder(_ folder: String) -> Result<Int32, Reason> {
        let refused = { (why: String) in Result<Int32, Reason>.failure(Reason(text: "the lock folder \(folder) cannot be used: \(why)")) }
        guard folder.hasPrefix("/") else { return refused("it is not an absolute path") }
        let user = geteuid()
        var pending = folder.split(separator: "/").map(String.init)
        var walked: [String] = []
        var directory = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        var links = 0
        var status = stat()
        guard directory >= 0 else { return refused("/ cannot be opened (errno \(errno))") }
        while true {
            // The folder reached so far (`walked`), checked on its descriptor.
            guard fstat(directory, &status) == 0 else {
                close(directory)
                return refused("errno \(errno)")
            }
            let place = "/" + walked.joined(separator: "/")
            if pending.isEmpty {
                guard status.st_uid == user, status.st_mode & 0o022 == 0 else {
                    close(directory)
                    return refused("it is not the user's own, or others may write to it")
                }
                return .success(directory)
            }
            let sticky = status.st_mode & S_ISVTX != 0
            guard status.st_uid == user || status.st_uid == 0, status.st_mode & 0o022 == 0 || sticky else {
                close(directory)
                return refused("\(place) belongs to another user, or others may write to it")
            }
            let name = pending.removeFirst()
            if name == "." { continue }
            if name == ".." {
                // The folders walked are real ones, so the one above is the previous step:
                // start again from `/`, checking each.
                _ = walked.popLast()
                pending = walked + pending
                walked = []
                close(directory)
                directory = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                guard directory >= 0 else { return refused("/ cannot be opened (errno \(errno))") }
                continue
            }
            var next = openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if next < 0, errno == ENOENT {
                if mkdirat(directory, name, 0o700) != 0, errno != EEXIST {
                    let error = errno
                    close(directory)
                    return refused("\(place)/\(name) cannot be created (errno \(error))")
                }
                next = openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
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
                    close(directory)
                    return refused("\(place)/\(name) is not a folder, or a symbolic link of another user's")
                }
                links += 1
                let destination = String(decoding: target[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                let parts = destination.split(separator: "/").map(String.init)
                pending = (destination.hasPrefix("/") ? parts : walked + parts) + pending
                walked = []
                close(directory)
                directory = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                guard directory >= 0 else { return refused("/ cannot be opened (errno \(errno))") }
                continue
            }
            guard next >= 0 else {
                let error = errno
                close(directory)
                return refused("\(place)/\(name) cannot be opened (errno \(error))")
            }
            close(directory)
            directory = next
            walked.append(name)
        }
    }
}

extension OAuth2AuthenticationStorage {
    /// What to do when another process holds the lock until the deadline.
    enum LockWait {
        /// Fail with ``OAuth2Error/Kind/unreachable``: a renewal.
        case fail
        /// Go on without it (`body` is told): a logout, which then says it cannot be sure.
        case proceed
    }

    /// Runs `body` holding `service`'s ``RefreshLock``, waiting for another process at most until
    /// `deadline`; `body` is told whether it holds the lock. No usable lock file (logged at
    /// warning) means `body` runs without it.
    func withRefreshLock<T: Sendable>(
        for service: String,
        deadline: ContinuousClock.Instant,
        orElse wait: LockWait,
        _ body: (_ held: Bool) async throws(OAuth2Error) -> T
    ) async throws(OAuth2Error) -> T {
        switch await RefreshLock.acquire(service: service, deadline: deadline) {
        case .held(let lock):
            let result: Result<T, OAuth2Error>
            do throws(OAuth2Error) {
                result = .success(try await body(true))
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
            return try await body(false)
        case .timedOut:
            guard wait == .proceed else {
                throw OAuth2Error(.unreachable, "another process was renewing the token of '\(service)' until the deadline")
            }
            return try await body(false)
        case .cancelled:
            throw OAuth2Error(.unreachable, "'\(service)': cancelled while waiting for another process's token renewal")
        }
    }
}
