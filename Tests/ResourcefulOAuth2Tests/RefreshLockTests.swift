import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

@testable import ResourcefulOAuth2

#if canImport(Glibc)
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
        let descriptor = try opened.get()
        close(descriptor)
        let mode = try FileManager.default.attributesOfItem(atPath: folder + "/a.lock")[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // A folder that did not exist is made, for the user alone.
        let nested = folder + "/made/locks"
        close(try RefreshLock.openFile(named: "b.lock", in: nested).get())
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

    @Test func aLockFileOthersCouldOpenIsNarrowedToTheUser() throws {
        // After `chmod -R a+rX ~`, another user could open the file and hold its lock forever.
        let folder = try folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(chmod(folder, 0o755) == 0)
        let path = folder + "/a.lock"
        #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o644]))
        #expect(chmod(path, 0o644) == 0)
        close(try RefreshLock.openFile(named: "a.lock", in: folder).get())
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // Group-writable: narrowed too.
        #expect(chmod(path, 0o660) == 0)
        close(try RefreshLock.openFile(named: "a.lock", in: folder).get())
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
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
        #expect(chmod(open, 0o777) == 0)
        #expect(throws: RefreshLock.Reason.self) { try RefreshLock.openFile(named: "a.lock", in: open + "/locks").get() }
        // The same, sticky (as /tmp): others cannot rename what is the user's in it.
        #expect(chmod(open, 0o1777) == 0)
        close(try RefreshLock.openFile(named: "a.lock", in: open + "/locks").get())

        // A symbolic link on the way that another user made is not followed; the user's is.
        let mine = base + "/mine"
        try FileManager.default.createDirectory(atPath: mine, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        #expect(symlink(mine, base + "/their-link") == 0)
        #expect(lchown(base + "/their-link", strangersUID, getegid()) == 0)
        #expect(throws: RefreshLock.Reason.self) { try RefreshLock.openFile(named: "a.lock", in: base + "/their-link/locks").get() }
        #expect(symlink(mine, base + "/my-link") == 0)
        close(try RefreshLock.openFile(named: "a.lock", in: base + "/my-link/locks").get())
        #expect(FileManager.default.fileExists(atPath: mine + "/locks/a.lock"))

        // Every folder the lock makes is for the user alone.
        close(try RefreshLock.openFile(named: "a.lock", in: base + "/made/by/the/lock").get())
        for made in ["/made", "/made/by", "/made/by/the", "/made/by/the/lock"] {
            #expect(try FileManager.default.attributesOfItem(atPath: base + made)[.posixPermissions] as? Int == 0o700, "\(made)")
        }
        // `..` and `.` are walked, not trusted.
        close(try RefreshLock.openFile(named: "a.lock", in: base + "/made/./by/../by/the/lock").get())
        #expect(throws: RefreshLock.Reason.self) {
            try RefreshLock.openFile(named: "a.lock", in: base + "/made/../theirs/resourceful/locks").get()
        }
    }

    @Test func theFolderDependsOnTheUserBeforeTheEnvironment() {
        // Every process of the user finds the same file first, whatever its environment says.
        #expect(
            RefreshLock.folders(environment: ["XDG_RUNTIME_DIR": "/run/user/1", "HOME": "/h"], accountHome: "/home/a")
                == ["/home/a/.cache/resourceful/locks", "/run/user/1/resourceful", "/h/.cache/resourceful/locks"]
        )
        #expect(RefreshLock.folders(environment: ["HOME": "/home/a"], accountHome: "/home/a") == ["/home/a/.cache/resourceful/locks"])
        // A relative path is something else's mistake, not a place for a lock.
        #expect(RefreshLock.folders(environment: ["XDG_RUNTIME_DIR": "run", "HOME": "h"], accountHome: nil) == [])
        // By default, the first folder is the same whatever HOME says.
        #expect(RefreshLock.folders(environment: ["HOME": "/elsewhere"]).first == RefreshLock.folders(environment: ["HOME": "/other"]).first)
        #expect(RefreshLock.folders(environment: ["HOME": "/elsewhere"]).first != "/elsewhere/.cache/resourceful/locks")
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
            switch await RefreshLock.acquire(service: service, deadline: .now + .seconds(5)) {
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
            switch await RefreshLock.acquire(service: service, deadline: .now + .seconds(5)) {
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
}
