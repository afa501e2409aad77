import Foundation
import Testing

@testable import ResourcefulOAuth2

#if canImport(Glibc)
    import Glibc
#endif

/// Processes of one user may choose different lock folders (the home folder is unsafe when one
/// chooses and safe when the next does): each locks every usable folder from the one it uses to
/// the last, so that they still exclude each other. Two opens in one process exclude each other
/// as two processes do (`flock` locks an open file, not a process).
@Suite struct RefreshLockFolderChoiceTests {
    /// A scratch folder with a home folder (`first` is its lock folder) and a fallback (`second`).
    struct Folders {
        let base: String
        var home: String { base + "/home" }
        var first: String { home + "/locks" }
        var second: String { base + "/second" }
        var list: [String] { [first, second] }

        init() throws {
            base = FileManager.default.temporaryDirectory.appendingPathComponent("refresh-choice-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            try FileManager.default.createDirectory(atPath: base + "/home", withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        }

        func remove() {
            try? FileManager.default.removeItem(atPath: base)
        }
    }

    /// The folders a held lock holds files in, or what the attempt came to.
    static func folders(_ attempt: consuming RefreshLock.Attempt) -> [String] {
        switch consume attempt {
        case .held(let lock): lock.claim.files.map(\.folder)
        case .unavailable: ["unavailable"]
        case .failed: ["failed"]
        case .timedOut: ["timed out"]
        case .cancelled: ["cancelled"]
        }
    }

    @Test func aProcessInTheHomeFolderWaitsForOneThatFellBack() async throws {
        let scratch = try Folders()
        defer { scratch.remove() }
        // A home folder others may write in is unsafe: the first process falls back.
        #expect(chmod(scratch.home, 0o775) == 0)
        let fallback = await RefreshLock.acquire(service: "s", deadline: .now + .seconds(30), folders: scratch.list)
        guard case .held(let holder) = consume fallback else {
            Issue.record("the fallback folder's lock was not taken")
            return
        }
        #expect(holder.claim.files.map(\.folder) == [scratch.second])
        // Made safe while its token request is out: the next process uses the home folder, and
        // must still wait for the fallback's holder.
        #expect(chmod(scratch.home, 0o755) == 0)
        let waited = await RefreshLock.acquire(service: "s", deadline: .now + .milliseconds(600), folders: scratch.list)
        #expect(RefreshLockTests.describe(waited).hasPrefix("timed out"))
        // Its home folder's lock was let go when it gave up: another process may take it.
        let home = await RefreshLock.acquire(service: "s", deadline: .now + .seconds(30), folders: [scratch.first])
        #expect(Self.folders(home) == [scratch.first])
        // Once the holder is done, the next process holds both folders' locks.
        _ = consume holder
        let next = await RefreshLock.acquire(service: "s", deadline: .now + .seconds(30), folders: scratch.list)
        #expect(Self.folders(next) == scratch.list)
    }

    @Test func aProcessThatFallsBackWaitsForOneInTheHomeFolder() async throws {
        let scratch = try Folders()
        defer { scratch.remove() }
        let first = await RefreshLock.acquire(service: "s", deadline: .now + .seconds(30), folders: scratch.list)
        guard case .held(let holder) = consume first else {
            Issue.record("the home folder's lock was not taken")
            return
        }
        #expect(holder.claim.files.map(\.folder) == scratch.list)
        #expect(chmod(scratch.home, 0o775) == 0)
        let waited = await RefreshLock.acquire(service: "s", deadline: .now + .milliseconds(600), folders: scratch.list)
        #expect(RefreshLockTests.describe(waited).hasPrefix("timed out"))
        _ = consume holder
        let next = await RefreshLock.acquire(service: "s", deadline: .now + .seconds(30), folders: scratch.list)
        #expect(Self.folders(next) == [scratch.second])
    }

    @Test func aLaterFolderNoProcessCanLockInIsPassedOver() async throws {
        let scratch = try Folders()
        defer { scratch.remove() }
        // Open to others: every process that comes to it fails there, so none holds its lock.
        #expect(mkdir(scratch.second, 0o755) == 0 && chmod(scratch.second, 0o755) == 0)
        let held = await RefreshLock.acquire(service: "s", deadline: .now + .seconds(30), folders: scratch.list)
        #expect(Self.folders(held) == [scratch.first])
        // Absent and impossible to make (under a file): likewise.
        #expect(FileManager.default.createFile(atPath: scratch.base + "/file", contents: Data()))
        let under = await RefreshLock.acquire(service: "s", deadline: .now + .seconds(30), folders: [scratch.first, scratch.base + "/file/locks"])
        #expect(Self.folders(under) == [scratch.first])
    }

    @Test func aFolderPassedOverThatBecomesUsableEndsTheClaim() async throws {
        let scratch = try Folders()
        defer { scratch.remove() }
        // Open to others when the lock is taken: passed over.
        #expect(mkdir(scratch.second, 0o755) == 0 && chmod(scratch.second, 0o755) == 0)
        let attempt = await RefreshLock.acquire(service: "s", deadline: .now + .seconds(30), folders: scratch.list)
        guard case .held(let lock) = consume attempt else {
            Issue.record("the lock was not taken")
            return
        }
        let claim = lock.claim
        #expect(claim.files.map(\.folder) == [scratch.first] && claim.skipped == [scratch.second])
        #expect(await claim.confirmed(until: .now + .seconds(30)))
        // Made usable while the token request is out: a process that falls back now locks there,
        // where this one holds nothing, so this one must not spend or store as if it held the lock.
        #expect(chmod(scratch.second, 0o700) == 0)
        #expect(await !claim.confirmed(until: .now + .seconds(30)))
        _ = consume lock
    }

    @Test func aLaterFolderThatLeadsToAFileAlreadyHeldIsPassedOverWithoutWaiting() async throws {
        let scratch = try Folders()
        defer { scratch.remove() }
        // The fallback folder is the user's link to the home folder's lock folder.
        try FileManager.default.createDirectory(atPath: scratch.first, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        #expect(symlink(scratch.first, scratch.second) == 0)
        let start = ContinuousClock.now
        let held = await RefreshLock.acquire(service: "s", deadline: .now + .seconds(30), folders: scratch.list)
        #expect(Self.folders(held) == [scratch.first])
        // It did not wait on its own lock until the deadline.
        #expect(ContinuousClock.now - start < .seconds(15))
    }

    @Test func aFileThatCannotBeMadeForWantOfSpaceHoldsNoLock() {
        // No process holds a lock on a file that is not there: a later folder that fails so is
        // passed over, whoever filled the file system; one that fails otherwise is not.
        #expect(RefreshLock.couldNotBeMade(ENOSPC) && RefreshLock.couldNotBeMade(EDQUOT))
        #expect(!RefreshLock.couldNotBeMade(EMFILE) && !RefreshLock.couldNotBeMade(EIO))
    }

    @Test func aHeldLockIsConfirmedOnlyWhileEveryFileIsStillNamed() async throws {
        let scratch = try Folders()
        defer { scratch.remove() }
        let attempt = await RefreshLock.acquire(service: "s", deadline: .now + .seconds(30), folders: scratch.list)
        guard case .held(let lock) = consume attempt else {
            Issue.record("the lock was not taken")
            return
        }
        let claim = lock.claim
        #expect(await claim.confirmed(until: .now + .seconds(30)))
        // The later folder's file removed: another process would lock a new one there.
        try FileManager.default.removeItem(atPath: scratch.second + "/" + RefreshLock.fileName(service: "s"))
        #expect(await !claim.confirmed(until: .now + .seconds(30)))
        _ = consume lock
    }
}
