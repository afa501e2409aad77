import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

@testable import ResourcefulOAuth2

#if canImport(Glibc)
    import CDispatch
    import CoreFoundation
    import Glibc
#endif

/// Who may hold a lock file that was made readable to others, and a lock folder another user
/// made first: the file is never replaced under a process of the user's, and a renewal never runs
/// without a lock the user's processes share.
extension RefreshLockTests {
    /// The inode `path` names now.
    static func inode(_ path: String) -> UInt64? {
        var status = stat()
        return stat(path, &status) == 0 ? UInt64(status.st_ino) : nil
    }

    @Test func aLockFileMadeReadableWhileARenewalHoldsItIsWaitedForNotReplaced() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/a.lock"
        // This user's renewal in another process (another descriptor) holds the file; then a
        // `chmod -R go+r ~` makes it readable to others.
        let renewal = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        try #require(renewal >= 0)
        var renewalOpen = true
        defer { if renewalOpen { close(renewal) } }
        try #require(flock(renewal, LOCK_EX | LOCK_NB) == 0)
        #expect(chmod(path, 0o644) == 0)
        let before = Self.inode(path)

        // A second process waits for it as for any busy lock: it neither replaces the file nor
        // gets a lock of its own while the renewal holds it, and at its deadline says which file
        // to remove should the holder be someone else.
        let opener: RefreshLock.Opener = { RefreshLock.openFile(named: "a.lock", in: folder) }
        let deadline = ContinuousClock.now + .milliseconds(800)
        var reason = ""
        switch await RefreshLock.acquire(service: "s", deadline: deadline, opener: opener) {
        case .failed(let why): reason = why
        default: Issue.record("the lock was had, or the wait did not say why it ended")
        }
        #expect(reason.contains("rm \(path)"), "\(reason)")
        #expect(ContinuousClock.now >= deadline)
        #expect(Self.inode(path) == before, "the file was replaced while a process of the user's held it")

        // Once the renewal lets go, the waiting process locks it and puts a private file in its place.
        let waiting = Task { Self.describe(await RefreshLock.acquire(service: "s", deadline: .now + .seconds(20), opener: opener)) }
        close(renewal)
        renewalOpen = false
        #expect(await waiting.value == "held")
        #expect(Self.inode(path) != before)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["a.lock"])
    }

    /// Another user who opened the file while it was readable holds its lock for ever: the file
    /// is replaced at once, without waiting for the deadline.
    @Test(.enabled(if: geteuid() == 0, "needs root to be another user"))
    func aLockFileHeldByAnotherUserIsReplacedAtOnce() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/a.lock"
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        #expect(chmod(path, 0o644) == 0)
        let before = Self.inode(path)
        let script = """
            import fcntl, os, sys, time
            fd = os.open(sys.argv[1], os.O_RDONLY)
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.setresgid(4242, 4242, 4242)
            os.setresuid(4242, 4242, 4242)
            print("held", flush=True)
            time.sleep(120)
            """
        let stranger = try RunningCommand("/usr/bin/python3", ["-c", script, path])
        defer { stranger.send(signal: SIGKILL) }
        #expect(try await stranger.line(where: { $0 == "held" }) == "held")

        let opener: RefreshLock.Opener = { RefreshLock.openFile(named: "a.lock", in: folder) }
        let started = ContinuousClock.now
        #expect(Self.describe(await RefreshLock.acquire(service: "s", deadline: started + .seconds(20), opener: opener)) == "held")
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(Self.inode(path) != before)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
        stranger.send(signal: SIGKILL)
        _ = try await stranger.finish()
    }

    /// `/tmp/resourceful-<uid>` made first by another user (or anything there that is not the
    /// user's own folder): the renewal fails, typed, naming the folder and the fix; it never
    /// runs without the lock.
    @Test(.enabled(if: geteuid() == 0, "needs root to make another user's folder"), arguments: ["folder", "file", "link"])
    func aLockFolderAnotherUserMadeFailsTheRenewalClosed(_ planted: String) async throws {
        let base = try folder()
        defer { try? FileManager.default.removeItem(atPath: base) }
        // The home's folder cannot be used (the home is not a folder), so the last one is tried.
        #expect(FileManager.default.createFile(atPath: base + "/home", contents: nil))
        let home = base + "/home/.local/state/resourceful/locks"
        let theirs = base + "/resourceful-1000"
        switch planted {
        case "folder":
            try FileManager.default.createDirectory(atPath: theirs, withIntermediateDirectories: false)
            #expect(chmod(theirs, 0o700) == 0 && chown(theirs, 4242, 4242) == 0)
        case "file":
            #expect(FileManager.default.createFile(atPath: theirs, contents: nil))
            #expect(chown(theirs, 4242, 4242) == 0)
        default:
            try FileManager.default.createDirectory(atPath: base + "/elsewhere", withIntermediateDirectories: false)
            #expect(chown(base + "/elsewhere", 4242, 4242) == 0)
            try FileManager.default.createSymbolicLink(atPath: theirs, withDestinationPath: base + "/elsewhere")
            #expect(lchown(theirs, 4242, 4242) == 0)
        }
        let error = #expect(throws: RefreshLock.Reason.self) { try RefreshLock.openFile(service: "s", folders: [home, theirs]).get() }
        #expect(error?.fallsBack == false)
        #expect(error?.text.contains(theirs) == true && error?.text.contains("sudo rm -r \(theirs)") == true)
        let opener: RefreshLock.Opener = { RefreshLock.openFile(service: "s", folders: [home, theirs]) }
        #expect(Self.describe(await RefreshLock.acquire(service: "s", deadline: .now + .seconds(10), opener: opener)) == "failed")

        try await MockServer.withTransport { server, transport in
            server.stub(
                .post, "/token", .json(raw: #"{"access_token": "at", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "rt-2"}"#)
            )
            let service = "lock-test-planted-folder"
            let refreshTokens = InMemoryWritableSecrets()
            try await refreshTokens.storeSecret("rt-1", named: OAuth2AuthenticationStorage.refreshTokenName(service: service))
            let storage = try await storage(server, transport, refreshTokens, timeout: .seconds(10))
            storage.openRefreshLock(with: opener)
            let renewal = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: service) }
            #expect(renewal?.kind == .unreachable)
            #expect(renewal?.description.contains(theirs) == true)
            #expect(server.requests.isEmpty, "the refresh token was spent without a lock")
            #expect(try await refreshTokens.secret(named: OAuth2AuthenticationStorage.refreshTokenName(service: service)) == "rt-1")
        }
    }
}
