import Dispatch
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

/// The file lock refresh tokens are spent under: its file private and never reached through a
/// link another user could plant, and every wait for it bounded by the deadline of what waits.
@Suite struct RefreshLockTests {
    /// A new folder of the user's, 0700.
    func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("refresh-lock-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        return path
    }

    @Test func theLockFileIsCreatedPrivate() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let opened = RefreshLock.openFile(named: "a.lock", in: folder)
        try opened.get().close()
        let mode = try FileManager.default.attributesOfItem(atPath: folder + "/a.lock")[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // A folder that did not exist is made, for the user alone.
        let nested = folder + "/made/locks"
        try RefreshLock.openFile(named: "b.lock", in: nested).get().close()
        let nestedMode = try FileManager.default.attributesOfItem(atPath: nested)[.posixPermissions] as? Int
        #expect(nestedMode == 0o700)
    }

    @Test func aSymbolicLinkAFIFOOrAFolderOthersMayWriteToIsRefused() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let target = folder + "/target"
        try Data("keep".utf8).write(to: URL(fileURLWithPath: target))
        try FileManager.default.createSymbolicLink(atPath: folder + "/link.lock", withDestinationPath: target)
        #expect(throws: RefreshLock.Reason.self) { try RefreshLock.openFile(named: "link.lock", in: folder).get() }
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep")

        #expect(mkfifo(folder + "/fifo.lock", 0o600) == 0)
        #expect(throws: RefreshLock.Reason.self) { try RefreshLock.openFile(named: "fifo.lock", in: folder).get() }

        let shared = folder + "/shared"
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false)
        #expect(chmod(shared, 0o777) == 0)
        #expect(throws: RefreshLock.Reason.self) { try RefreshLock.openFile(named: "a.lock", in: shared).get() }
        let created = FileManager.default.fileExists(atPath: shared + "/a.lock")
        #expect(!created)

        // A folder that is itself a link is not followed either.
        try FileManager.default.createSymbolicLink(atPath: folder + "/linked", withDestinationPath: shared)
        #expect(throws: RefreshLock.Reason.self) { try RefreshLock.openFile(named: "a.lock", in: folder + "/linked").get() }
    }

    @Test func aLockFileOthersCouldOpenIsReplacedNotNarrowed() async throws {
        // After `chmod -R a+rX ~`, another user could open the file; narrowing it afterwards
        // leaves them their descriptor, and with it the lock for ever (another user holding it:
        // `aLockFileHeldByAnotherUserIsReplacedAtOnce`).
        let folder = try folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/a.lock"
        #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o644]))
        #expect(chmod(path, 0o644) == 0)
        // Someone opened it while it was open to them.
        let theirs = open(path, O_RDONLY | O_CLOEXEC)
        try #require(theirs >= 0)
        defer { close(theirs) }
        var before = stat()
        #expect(fstat(theirs, &before) == 0)

        let opener: RefreshLock.Opener = { RefreshLock.openFile(named: "a.lock", in: folder) }
        #expect(Self.describe(await RefreshLock.acquire(service: "s", deadline: .now + .seconds(10), opener: opener)) == "held")
        var after = stat()
        #expect(stat(path, &after) == 0)
        #expect(after.st_ino != before.st_ino, "the file others opened is still the lock file")
        #expect(after.st_mode & 0o7777 == 0o600)
        // Group-writable: replaced too; nothing is left beside it.
        #expect(chmod(path, 0o660) == 0)
        #expect(Self.describe(await RefreshLock.acquire(service: "s", deadline: .now + .seconds(10), opener: opener)) == "held")
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["a.lock"])
    }

    @Test func aLockFolderOpenToOthersFailsTheLockAndSaysHowToFixIt() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(chmod(folder, 0o755) == 0)
        let error = #expect(throws: RefreshLock.Reason.self) { try RefreshLock.openFile(named: "a.lock", in: folder).get() }
        #expect(error?.fallsBack == false)
        #expect(error?.text.contains("chmod 700 \(folder)") == true)
        #expect(!FileManager.default.fileExists(atPath: folder + "/a.lock"))
        // Not passed over for another folder, which other processes would not share.
        let second = try self.folder()
        defer { try? FileManager.default.removeItem(atPath: second) }
        #expect(throws: RefreshLock.Reason.self) { try RefreshLock.openFile(service: "s", folders: [folder, second]).get() }
        #expect(try FileManager.default.contentsOfDirectory(atPath: second).isEmpty)
        let opener: RefreshLock.Opener = { RefreshLock.openFile(service: "s", folders: [folder, second]) }
        #expect(Self.describe(await RefreshLock.acquire(service: "s", deadline: .now + .seconds(10), opener: opener)) == "failed")

        // A renewal fails, typed, and spends nothing: no renewal without the lock.
        try await MockServer.withTransport { server, transport in
            server.stub(
                .post, "/token", .json(raw: #"{"access_token": "at", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "rt-2"}"#)
            )
            let service = "lock-test-open-folder"
            let refreshTokens = InMemoryWritableSecrets()
            try await refreshTokens.storeSecret("rt-1", named: OAuth2AuthenticationStorage.refreshTokenName(service: service))
            let storage = try await storage(server, transport, refreshTokens, timeout: .seconds(10))
            storage.openRefreshLock(with: opener)
            let renewal = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: service) }
            #expect(renewal?.kind == .unreachable)
            #expect(renewal?.description.contains("chmod 700") == true)
            #expect(server.requests.isEmpty)
            #expect(try await refreshTokens.secret(named: OAuth2AuthenticationStorage.refreshTokenName(service: service)) == "rt-1")
        }
    }

    @Test func everyFolderAboveTheLockFolderMustBeSafeFromOtherUsers() throws {
        // HOME=/tmp: another user could make `/tmp/.cache`, or leave a folder on the way open to
        // all, and rename the lock folder away (two processes then lock two files).
        let base = try folder()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let strangersUID: uid_t = 4242

        // A folder on the way that belongs to another user, though the lock folder is the user's.
        let theirs = base + "/theirs"
        try FileManager.default.createDirectory(atPath: theirs + "/resourceful/locks", withIntermediateDirectories: true)
        #expect(chmod(theirs, 0o755) == 0 && chown(theirs, strangersUID, getegid()) == 0)
        #expect(throws: RefreshLock.Reason.self) { try RefreshLock.openFile(named: "a.lock", in: theirs + "/resourceful/locks").get() }
        #expect(!FileManager.default.fileExists(atPath: theirs + "/resourceful/locks/a.lock"))

        // A folder on the way anyone may write to, without the sticky bit.
        let open = base + "/open"
        try FileManager.default.createDirectory(atPath: open + "/locks", withIntermediateDirectories: true)
        #expect(chmod(open + "/locks", 0o700) == 0)
        #expect(chmod(open, 0o777) == 0)
        #expect(throws: RefreshLock.Reason.self) { try RefreshLock.openFile(named: "a.lock", in: open + "/locks").get() }
        // The same, sticky (as /tmp): others cannot rename what is the user's in it.
        #expect(chmod(open, 0o1777) == 0)
        try RefreshLock.openFile(named: "a.lock", in: open + "/locks").get().close()

        // A symbolic link on the way that another user made is not followed; the user's is.
        let mine = base + "/mine"
        try FileManager.default.createDirectory(atPath: mine, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        #expect(symlink(mine, base + "/their-link") == 0)
        #expect(lchown(base + "/their-link", strangersUID, getegid()) == 0)
        #expect(throws: RefreshLock.Reason.self) { try RefreshLock.openFile(named: "a.lock", in: base + "/their-link/locks").get() }
        #expect(symlink(mine, base + "/my-link") == 0)
        try RefreshLock.openFile(named: "a.lock", in: base + "/my-link/locks").get().close()
        #expect(FileManager.default.fileExists(atPath: mine + "/locks/a.lock"))

        // Every folder the lock makes is for the user alone.
        try RefreshLock.openFile(named: "a.lock", in: base + "/made/by/the/lock").get().close()
        for made in ["/made", "/made/by", "/made/by/the", "/made/by/the/lock"] {
            #expect(try FileManager.default.attributesOfItem(atPath: base + made)[.posixPermissions] as? Int == 0o700, "\(made)")
        }
        // `..` and `.` are walked, not trusted.
        try RefreshLock.openFile(named: "a.lock", in: base + "/made/./by/../by/the/lock").get().close()
        #expect(throws: RefreshLock.Reason.self) {
            try RefreshLock.openFile(named: "a.lock", in: base + "/made/../theirs/resourceful/locks").get()
        }
    }

    @Test func theFolderDependsOnTheUserAloneNeverOnTheEnvironment() {
        // Every process of the user finds the same file, whatever its environment says.
        #expect(
            RefreshLock.folders(accountHome: "/home/a", user: 1000) == ["/home/a/.local/state/resourceful/locks", "/tmp/resourceful-1000"])
        // No entry in the user database (some containers): a folder named for the uid, not $HOME.
        #expect(RefreshLock.folders(accountHome: nil, user: 1000) == ["/tmp/resourceful-1000"])
        // A relative home is something else's mistake, not a place for a lock.
        #expect(RefreshLock.folders(accountHome: "h", user: 7) == ["/tmp/resourceful-7"])
        #expect(RefreshLock.folders(accountHome: "/", user: 7) == ["/.local/state/resourceful/locks", "/tmp/resourceful-7"])
        // By default: the user database's home and the effective uid, nothing the environment names.
        let environment = ProcessInfo.processInfo.environment
        let defaults = RefreshLock.folders()
        #expect(defaults == RefreshLock.folders(accountHome: RefreshLock.accountHome(), user: geteuid()))
        for variable in ["HOME", "XDG_RUNTIME_DIR", "XDG_STATE_HOME", "TMPDIR"] {
            if let value = environment[variable], value != RefreshLock.accountHome(), value != "/tmp" {
                #expect(!defaults.contains { $0.hasPrefix(value + "/") }, "\(variable) chose a lock folder")
            }
        }
        #expect(RefreshLock.fileName(service: "a") != RefreshLock.fileName(service: "b"))
        #expect(!RefreshLock.fileName(service: "../x").contains("/"))
    }

    /// A storage of the `refresh_token` grant on `server`, its token requests bounded by `timeout`.
    func storage(_ server: MockServer, _ transport: any HTTPTransport, _ refreshTokens: InMemoryWritableSecrets, timeout: Duration)
        async throws
        -> OAuth2AuthenticationStorage
    {
        var settings = OAuth2Settings(
            clientID: "cli", tokenEndpoint: server.baseURL.appendingPathComponent("token"), clientAuthentication: .none,
            grant: .refreshToken
        )
        settings.revocationEndpoint = server.baseURL.appendingPathComponent("revoke")
        return try await OAuth2AuthenticationStorage(
            settings: settings, transport: transport, refreshTokens: refreshTokens, timeout: timeout)
    }

    @Test func aRenewalWaitsForAnotherHolderOnlyUntilItsDeadline() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(
                .post, "/token", .json(raw: #"{"access_token": "at", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "rt-2"}"#)
            )
            let service = "lock-test-renewal"
            let refreshTokens = InMemoryWritableSecrets()
            try await refreshTokens.storeSecret("rt-1", named: OAuth2AuthenticationStorage.refreshTokenName(service: service))
            let storage = try await storage(server, transport, refreshTokens, timeout: .milliseconds(500))
            // Another holder (a descriptor of its own, as another process has) keeps the lock.
            switch await RefreshLock.acquire(service: service, deadline: .now + .seconds(60)) {
            case .held(let lock):
                let started = ContinuousClock.now
                let error = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: service) }
                let waited = ContinuousClock.now - started
                #expect(error?.kind == .unreachable)
                #expect(waited >= .milliseconds(500) && waited < .milliseconds(500) + RefreshLock.maximumPause + .seconds(2))
                #expect(server.requests.isEmpty, "the refresh token was spent without the lock")
                _ = consume lock
            default:
                Issue.record("the lock could not be taken")
            }
            // Released, the lock is had, and the refresh token spent (a storage whose requests
            // may take as long as a loaded machine needs).
            let patient = try await self.storage(server, transport, refreshTokens, timeout: .seconds(30))
            #expect(try await patient.authenticationHeader(for: service) == "Bearer at")
        }
    }

    @Test func aLogoutThatCannotHaveTheLockSaysItCannotBeSure() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/revoke", .json(raw: "{}"))
            let service = "lock-test-logout"
            let name = OAuth2AuthenticationStorage.refreshTokenName(service: service)
            let refreshTokens = InMemoryWritableSecrets()
            try await refreshTokens.storeSecret("rt-1", named: name)
            let storage = try await storage(server, transport, refreshTokens, timeout: .milliseconds(300))
            switch await RefreshLock.acquire(service: service, deadline: .now + .seconds(60)) {
            case .held(let lock):
                let error = await #expect(throws: OAuth2Error.self) { try await storage.logOut(service: service) }
                #expect(error?.kind == .unreachable)
                #expect(error?.description.contains("check with `resourceful status --service \(service)`") == true)
                _ = consume lock
            default:
                Issue.record("the lock could not be taken")
            }
            // It logged out all the same: revoked and deleted.
            #expect(try await refreshTokens.secret(named: name) == nil)
            #expect(server.requests.map(\.path) == ["/revoke"])
        }
    }

    /// What an attempt came to, in a word (the lock, if held, let go).
    static func describe(_ attempt: consuming RefreshLock.Attempt) -> String {
        switch consume attempt {
        case .held: "held"
        case .unavailable: "unavailable"
        case .failed: "failed"
        case .timedOut(let opening): opening ? "timed out opening" : "timed out"
        case .cancelled: "cancelled"
        }
    }

    /// A count shared with openers.
    final class Counter: Sendable {
        let value = Locked(0)
        func add() { value.withLock { $0 += 1 } }
        var count: Int { value.withLock { $0 } }
    }

    @Test func aWaiterDoesNotLockAFileRemovedWhileAnotherProcessHeldIt() async throws {
        // A cache cleaner removes the lock file while a renewal holds it; a second process makes
        // a new file and locks it. A third that opened the old file and waited must not lock the
        // old one when it is let go: two renewals would then spend one refresh token.
        let folder = try folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let opens = Counter()
        let plain: RefreshLock.Opener = { RefreshLock.openFile(named: "a.lock", in: folder) }
        // Counted once the file is open, so that the file is removed only after the waiter has
        // opened it, however late a loaded machine runs it.
        let counted: RefreshLock.Opener = {
            let opened = RefreshLock.openFile(named: "a.lock", in: folder)
            opens.add()
            return opened
        }
        switch await RefreshLock.acquire(service: "s", deadline: .now + .seconds(60), opener: plain) {
        case .held(let first):
            // Long enough for a loaded machine to open, unlink and lock a second file within it:
            // the waiter only ever ends by this deadline.
            let deadline = ContinuousClock.now + .seconds(8)
            let waiter = Task { Self.describe(await RefreshLock.acquire(service: "s", deadline: deadline, opener: counted)) }
            while opens.count == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            try #require(opens.count == 1, "the waiter never opened the file")
            #expect(unlink(folder + "/a.lock") == 0)
            switch await RefreshLock.acquire(service: "s", deadline: .now + .seconds(60), opener: plain) {
            case .held(let second):
                _ = consume first
                #expect(await waiter.value == "timed out", "a lock on a removed file was taken while another file was locked")
                #expect(opens.count >= 2, "the file the name gives was not opened again")
                _ = consume second
            default:
                Issue.record("the new file could not be locked")
                waiter.cancel()
            }
        default:
            Issue.record("the lock could not be taken")
        }
        // With no one else holding it, the file the name gives is locked.
        #expect(Self.describe(await RefreshLock.acquire(service: "s", deadline: .now + .seconds(60), opener: plain)) == "held")
    }

    @Test func theLockFolderIsAStateFolderNoCacheCleanerEmpties() {
        let folders = RefreshLock.folders(accountHome: "/home/a", user: 1000)
        #expect(folders.first == "/home/a/.local/state/resourceful/locks")
        #expect(!folders.contains { $0.contains("/.cache/") })
        // The home folder is the user database's (getpwuid_r), not one the environment names.
        if let entry = getpwuid(geteuid()), let directory = entry.pointee.pw_dir {
            #expect(RefreshLock.accountHome() == String(cString: directory))
        }
    }

    @Test func onlyAnAbsentOrUnsafeFolderMakesTheNextOneBeTried() async throws {
        // A passing failure (no descriptor left, a file the user may not open) would have this
        // process lock a file in another folder, which other processes do not share.
        #expect(!RefreshLock.fallsBack(EMFILE))
        #expect(!RefreshLock.fallsBack(ENFILE))
        #expect(!RefreshLock.fallsBack(EACCES, existing: true))
        #expect(RefreshLock.fallsBack(ENOENT))
        #expect(RefreshLock.fallsBack(EACCES))

        let base = try folder()
        defer { try? FileManager.default.removeItem(atPath: base) }
        // An unsafe first folder: the next one is used.
        #expect(chmod(base, 0o777) == 0)
        let second = try folder()
        defer { try? FileManager.default.removeItem(atPath: second) }
        let opened = try RefreshLock.openFile(service: "s", folders: [base + "/locks", second]).get()
        #expect(opened.folder == second)
        opened.close()

        // A passing failure in the first folder fails the lock, typed, without the next folder.
        let failing: RefreshLock.Opener = { .failure(RefreshLock.Reason(text: "errno \(EMFILE)", fallsBack: false)) }
        #expect(Self.describe(await RefreshLock.acquire(service: "s", deadline: .now + .seconds(60), opener: failing)) == "failed")
        let absent: RefreshLock.Opener = { .failure(RefreshLock.Reason(text: "absent")) }
        #expect(Self.describe(await RefreshLock.acquire(service: "s", deadline: .now + .seconds(60), opener: absent)) == "unavailable")
    }

    /// An opener that blocks, as `open` does on a home folder whose file system does not answer,
    /// until `release` is signalled.
    static func hangingOpener(_ release: DispatchSemaphore, _ entered: Counter) -> RefreshLock.Opener {
        {
            entered.add()
            _ = release.wait(timeout: .now() + .seconds(60))
            return .failure(RefreshLock.Reason(text: "released"))
        }
    }

    @Test func aFileSystemThatDoesNotAnswerHoldsNoPoolThread() async throws {
        let release = DispatchSemaphore(value: 0)
        let entered = Counter()
        let opener = Self.hangingOpener(release, entered)
        // More waits than the cooperative pool has threads: were the opening done on them, the
        // probe below could not run while they wait. Other suites may keep the pool busy for a
        // while, so the waits are given long enough to all start, and are released afterwards.
        let waits = ProcessInfo.processInfo.activeProcessorCount + 2
        let deadline = ContinuousClock.now + .seconds(50)
        let outcomes = Task {
            await withTaskGroup(of: String.self) { group in
                for _ in 0..<waits {
                    group.addTask { Self.describe(await RefreshLock.acquire(service: "s", deadline: deadline, opener: opener)) }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
        while entered.count < waits, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(entered.count == waits)
        let probe = await Task.detached { ContinuousClock.now }.value
        #expect(probe < deadline, "a task could not run while the lock files were being opened")
        for _ in 0..<waits { release.signal() }
        // Released before their deadline, each wait ends with what its opener said.
        #expect(await outcomes.value == Array(repeating: "unavailable", count: waits))
    }

    @Test func aFileSystemThatDoesNotAnswerCostsAWaitUntilTheDeadline() async throws {
        let release = DispatchSemaphore(value: 0)
        defer { release.signal() }
        let start = ContinuousClock.now
        let deadline = start + .seconds(1)
        let outcome = Self.describe(await RefreshLock.acquire(service: "s", deadline: deadline, opener: Self.hangingOpener(release, Counter())))
        #expect(outcome == "timed out opening")
        // The opener would hold it 60 s: ending well before that is ending at the deadline.
        let waited = ContinuousClock.now - start
        #expect(waited < .seconds(30), "the wait took \(waited) for a deadline of 1 s")
    }

    @Test func aRenewalAndALogoutOnAFileSystemThatDoesNotAnswerEndAtTheirDeadline() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/revoke", .json(raw: "{}"))
            let service = "lock-test-hanging"
            let name = OAuth2AuthenticationStorage.refreshTokenName(service: service)
            let refreshTokens = InMemoryWritableSecrets()
            try await refreshTokens.storeSecret("rt-1", named: name)
            let storage = try await storage(server, transport, refreshTokens, timeout: .milliseconds(400))
            let release = DispatchSemaphore(value: 0)
            storage.openRefreshLock(with: Self.hangingOpener(release, Counter()))
            defer { for _ in 0..<4 { release.signal() } }

            var started = ContinuousClock.now
            let renewal = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: service) }
            #expect(renewal?.kind == .unreachable)
            #expect(ContinuousClock.now - started < .seconds(15), "a wait for ever would never end")
            #expect(server.requests.isEmpty, "the refresh token was spent without the lock")

            started = ContinuousClock.now
            let logout = await #expect(throws: OAuth2Error.self) { try await storage.logOut(service: service) }
            #expect(ContinuousClock.now - started < .seconds(15), "a wait for ever would never end")
            #expect(logout?.description.contains("could not be opened in time") == true)
            #expect(try await refreshTokens.secret(named: name) == nil)
        }
    }

    @Test func aLogoutWithNoUsableLockFolderSaysSoAndWhich() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/revoke", .json(raw: "{}"))
            let service = "lock-test-no-folder"
            let name = OAuth2AuthenticationStorage.refreshTokenName(service: service)
            let refreshTokens = InMemoryWritableSecrets()
            try await refreshTokens.storeSecret("rt-1", named: name)
            let storage = try await storage(server, transport, refreshTokens, timeout: .seconds(5))
            let base = try folder()
            defer { try? FileManager.default.removeItem(atPath: base) }
            #expect(chmod(base, 0o777) == 0)
            storage.openRefreshLock(with: { RefreshLock.openFile(service: service, folders: [base + "/locks"]) })
            let error = await #expect(throws: OAuth2Error.self) { try await storage.logOut(service: service) }
            #expect(error?.kind == .unreachable)
            let description = error?.description ?? ""
            #expect(description.contains("no folder for the lock"))
            #expect(description.contains(base + "/locks"))
            #expect(!description.contains("could not be had in time"))
            #expect(try await refreshTokens.secret(named: name) == nil)
        }
    }

    @Test func aLockFileThatCannotBeReplacedForItsFolderSLockNamesTheFolderAndTheFix() async throws {
        // The folder and the file were open to others once: another user who opened the folder
        // then holds a descriptor of it, and with it the folder's lock, which replacing the file
        // takes. Here a second descriptor of this process holds it (`/proc/locks` shows the user's
        // own process): waited for until the deadline, then named, with the fix.
        let folder = try folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/a.lock"
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        #expect(chmod(path, 0o644) == 0)
        let theirs = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try #require(theirs >= 0)
        defer { close(theirs) }
        try #require(flock(theirs, LOCK_EX | LOCK_NB) == 0)
        let before = Self.inode(path)

        let opener: RefreshLock.Opener = { RefreshLock.openFile(named: "a.lock", in: folder) }
        let deadline = ContinuousClock.now + .milliseconds(800)
        var reason = ""
        switch await RefreshLock.acquire(service: "s", deadline: deadline, opener: opener) {
        case .failed(let why): reason = why
        default: Issue.record("the lock was had, or the wait did not say why it ended")
        }
        #expect(reason.contains("its folder \(folder) was locked"), "\(reason)")
        #expect(reason.contains("rm \(path)"), "\(reason)")
        #expect(Self.inode(path) == before, "the file was replaced without its folder's lock")
        // The fix works: once the file is gone, a new private one needs no replacement.
        #expect(unlink(path) == 0)
        #expect(Self.describe(await RefreshLock.acquire(service: "s", deadline: .now + .seconds(20), opener: opener)) == "held")
    }

    /// Another user holds the folder's lock (they opened it while it was open to them): the
    /// renewal fails at once, naming the folder, the file and the fix, not at its time-out.
    @Test(.enabled(if: geteuid() == 0, "needs root to be another user"))
    func aLockFolderHeldByAnotherUserFailsAtOnceNamingTheFix() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/a.lock"
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        #expect(chmod(path, 0o644) == 0)
        #expect(chmod(folder, 0o755) == 0)
        let script = """
            import fcntl, os, sys, time
            fd = os.open(sys.argv[1], os.O_RDONLY)
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.setresgid(4242, 4242, 4242)
            os.setresuid(4242, 4242, 4242)
            print("held", flush=True)
            time.sleep(120)
            """
        let stranger = try RunningCommand("/usr/bin/python3", ["-c", script, folder])
        defer { stranger.send(signal: SIGKILL) }
        #expect(try await stranger.line(where: { $0 == "held" }) == "held")
        #expect(chmod(folder, 0o700) == 0)

        let opener: RefreshLock.Opener = { RefreshLock.openFile(named: "a.lock", in: folder) }
        let started = ContinuousClock.now
        var reason = ""
        switch await RefreshLock.acquire(service: "s", deadline: started + .seconds(40), opener: opener) {
        case .failed(let why): reason = why
        default: Issue.record("the lock was had, or the wait did not say why it ended")
        }
        #expect(ContinuousClock.now - started < .seconds(20), "it waited for a lock another user holds")
        #expect(reason.contains(folder) && reason.contains("rm \(path)"), "\(reason)")
        stranger.send(signal: SIGKILL)
        _ = try await stranger.finish()
    }
}
