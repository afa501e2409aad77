import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

@testable import ResourcefulOAuth2

#if canImport(Glibc)
    import Glibc
#endif

/// A lock file removed (by hand, by a cleaner) while a renewal holds it lets another process make
/// a new file and lock it: the holder checks, before it spends the refresh token and before it
/// stores the new one, that the name still gives the file it holds. And a login waits for the lock
/// as long as a renewal would, however little is left of its own deadline, and never loses the
/// token it got.
@Suite struct RefreshLockFileRemovedTests {
    /// A new folder of the user's, 0700.
    func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("refresh-lock-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        return path
    }

    /// Refresh tokens in memory whose reads can be watched and made to fail: `onRead` runs at
    /// each read with its number (from 1), and reads numbered in `failing` throw.
    final class WatchedSecrets: WritableSecretStorage {
        struct Failure: Error {}
        let inner = InMemoryWritableSecrets()
        let reads = Locked(0)
        let failing: Set<Int>
        let onRead: @Sendable (Int) -> Void

        init(failing: Set<Int> = [], onRead: @escaping @Sendable (Int) -> Void = { _ in }) {
            self.failing = failing
            self.onRead = onRead
        }

        func secret(named name: String) async throws -> String? {
            let read = reads.withLock {
                $0 += 1
                return $0
            }
            onRead(read)
            if failing.contains(read) { throw Failure() }
            return try await inner.secret(named: name)
        }

        func storeSecret(_ secret: String, named name: String) async throws { try await inner.storeSecret(secret, named: name) }
        func deleteSecret(named name: String) async throws -> Bool { try await inner.deleteSecret(named: name) }
    }

    /// Another process's part: removes `folder`'s `a.lock` (as a cleaner would) and locks the
    /// new file the name then gives, with a descriptor of its own; the descriptor, or -1.
    static func removeAndLockAnew(in folder: String) -> Int32 {
        guard unlink(folder + "/a.lock") == 0, case .success(let file) = RefreshLock.openFile(named: "a.lock", in: folder) else {
            return -1
        }
        close(file.directory)
        guard flock(file.descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(file.descriptor)
            return -1
        }
        return file.descriptor
    }

    /// A storage of the `refresh_token` grant on `server` whose lock file is `folder`'s `a.lock`.
    func storage(
        _ server: MockServer, _ transport: any HTTPTransport, _ refreshTokens: any WritableSecretStorage, folder: String, timeout: Duration
    )
        async throws -> OAuth2AuthenticationStorage
    {
        var settings = OAuth2Settings(
            clientID: "cli", tokenEndpoint: server.baseURL.appendingPathComponent("token"), clientAuthentication: .none,
            grant: .refreshToken
        )
        settings.revocationEndpoint = server.baseURL.appendingPathComponent("revoke")
        let storage = try await OAuth2AuthenticationStorage(
            settings: settings, transport: transport, refreshTokens: refreshTokens, timeout: timeout)
        storage.openRefreshLock(with: { RefreshLock.openFile(named: "a.lock", in: folder) })
        return storage
    }

    static let answer = MockResponse.json(
        raw: #"{"access_token": "at", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "rt-2"}"#)

    @Test func aLockFileRemovedBeforeTheSpendingIsTakenAgainAndNothingIsSpentMeanwhile() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let service = "lock-removed-before-spending"
        let name = OAuth2AuthenticationStorage.refreshTokenName(service: service)
        // Between the renewal's lock and its spending (its read of the refresh token), the file is
        // removed and another process locks the new one.
        let other = Locked<Int32?>(nil)
        let refreshTokens = WatchedSecrets { read in
            if read == 1 { other.withLock { $0 = Self.removeAndLockAnew(in: folder) } }
        }
        try await refreshTokens.storeSecret("rt-1", named: name)
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/token", Self.answer)
            let storage = try await storage(server, transport, refreshTokens, folder: folder, timeout: .seconds(60))
            let renewal = Task { try await storage.authenticationHeader(for: service) }
            let start = ContinuousClock.now
            while other.withLock({ $0 }) == nil, ContinuousClock.now < start + .seconds(30) { try await Task.sleep(for: .milliseconds(5)) }
            let held = other.withLock { $0 }
            let descriptor = try #require(held)
            try #require(descriptor >= 0, "the other process could not lock the new file")
            // While the other process holds the new file's lock, the renewal spends nothing.
            let watched = ContinuousClock.now + .seconds(1)
            while server.requests.isEmpty, ContinuousClock.now < watched { try await Task.sleep(for: .milliseconds(10)) }
            #expect(server.requests.isEmpty, "the refresh token was spent while another process held the lock")
            close(descriptor)
            // Let go, the lock is had again, and the refresh token spent once.
            #expect(try await renewal.value == "Bearer at")
            #expect(server.requests.map(\.path) == ["/token"])
            #expect(try await refreshTokens.secret(named: name) == "rt-2")
        }
    }

    @Test func aLockFileRemovedWhileTheRequestIsOutMakesTheStoringAsCarefulAsWithoutTheLock() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let service = "lock-removed-while-out"
        let name = OAuth2AuthenticationStorage.refreshTokenName(service: service)
        // The second read is the one before the new token is stored: it fails. Holding the lock,
        // that would not matter; once another process could take it, nothing is sure.
        let refreshTokens = WatchedSecrets(failing: [2])
        try await refreshTokens.storeSecret("rt-1", named: name)
        let other = Locked<Int32?>(nil)
        defer { if let descriptor = other.withLock({ $0 }), descriptor >= 0 { close(descriptor) } }
        try await MockServer.withTransport { server, transport in
            server.route(.post, "/token") { _ in
                // While the request is out, the file is removed and another process locks anew.
                other.withLock { $0 = Self.removeAndLockAnew(in: folder) }
                return Self.answer
            }
            let storage = try await storage(server, transport, refreshTokens, folder: folder, timeout: .seconds(30))
            let error = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: service) }
            #expect(try #require(other.withLock { $0 }) >= 0, "the other process could not lock the new file")
            #expect(error?.kind == .unreachable)
            #expect(error?.description.contains("could not be read again") == true)
            // The stored token is untouched: the new one was not written over what another
            // process may have stored meanwhile.
            #expect(try await refreshTokens.inner.secret(named: name) == "rt-1")
            #expect(server.requests.map(\.path) == ["/token"])
        }
    }

    @Test func aLockFileKeptInPlaceChangesNothing() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let service = "lock-kept"
        let name = OAuth2AuthenticationStorage.refreshTokenName(service: service)
        let refreshTokens = WatchedSecrets(failing: [2])
        try await refreshTokens.storeSecret("rt-1", named: name)
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/token", Self.answer)
            let storage = try await storage(server, transport, refreshTokens, folder: folder, timeout: .seconds(30))
            // Under a lock still in place, a storage that cannot be read again loses nothing.
            #expect(try await storage.authenticationHeader(for: service) == "Bearer at")
            #expect(try await refreshTokens.inner.secret(named: name) == "rt-2")
        }
    }

    @Test func aLoginWaitsForTheLockAsLongAsARenewalWouldThoughItsOwnDeadlineIsNearlyOut() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let service = "lock-login-wait"
        let name = OAuth2AuthenticationStorage.refreshTokenName(service: service)
        let refreshTokens = WatchedSecrets()
        try await MockServer.withTransport { server, transport in
            server.stub(
                .post, "/token",
                .json(raw: #"{"access_token": "at", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "rt-login"}"#))
            let storage = try await storage(server, transport, refreshTokens, folder: folder, timeout: .seconds(60))
            let endpoints = try await storage.endpoints(deadline: .now + .seconds(10))
            let opener: RefreshLock.Opener = { RefreshLock.openFile(named: "a.lock", in: folder) }
            switch await RefreshLock.acquire(service: service, deadline: .now + .seconds(30), opener: opener) {
            case .held(let lock):
                // A login whose token request ends near its own deadline, while another process
                // renews (holds the lock) past that deadline (long enough for a loaded machine
                // to answer the token request within it).
                let requestDeadline = ContinuousClock.now + .seconds(8)
                let login = Task {
                    try await storage.request(
                        [("grant_type", "authorization_code"), ("code", "c")], endpoints: endpoints, deadline: requestDeadline,
                        storingRefreshTokenFor: service, withoutScope: true
                    )
                }
                while ContinuousClock.now < requestDeadline + .seconds(1) {
                    try await Task.sleep(for: .milliseconds(20))
                }
                #expect(server.requests.map(\.path) == ["/token"])
                #expect(try await refreshTokens.inner.secret(named: name) == nil, "the login stored its token without the lock")
                _ = consume lock
                // Let go: the login stores its token under the lock, and succeeds.
                #expect(try await login.value.header == "Bearer at")
                #expect(try await refreshTokens.inner.secret(named: name) == "rt-login")
            default:
                Issue.record("the lock could not be taken")
            }
        }
    }

    @Test func aLoginThatCannotHaveTheLockInTimeKeepsItsTokenAllTheSame() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let service = "lock-login-stuck"
        let name = OAuth2AuthenticationStorage.refreshTokenName(service: service)
        let refreshTokens = WatchedSecrets()
        try await MockServer.withTransport { server, transport in
            server.stub(
                .post, "/token",
                .json(raw: #"{"access_token": "at", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "rt-login"}"#))
            let storage = try await storage(server, transport, refreshTokens, folder: folder, timeout: .milliseconds(500))
            let endpoints = try await storage.endpoints(deadline: .now + .seconds(10))
            let opener: RefreshLock.Opener = { RefreshLock.openFile(named: "a.lock", in: folder) }
            switch await RefreshLock.acquire(service: service, deadline: .now + .seconds(30), opener: opener) {
            case .held(let lock):
                let started = ContinuousClock.now
                let token = try await storage.request(
                    [("grant_type", "authorization_code"), ("code", "c")], endpoints: endpoints, deadline: .now + .seconds(30),
                    storingRefreshTokenFor: service, withoutScope: true
                )
                // Waited about the storage's timeout, not the login's deadline; the person's
                // fresh login is kept.
                #expect(ContinuousClock.now - started < .seconds(20))
                #expect(token.header == "Bearer at")
                #expect(try await refreshTokens.inner.secret(named: name) == "rt-login")
                _ = consume lock
            default:
                Issue.record("the lock could not be taken")
            }
        }
    }
}
