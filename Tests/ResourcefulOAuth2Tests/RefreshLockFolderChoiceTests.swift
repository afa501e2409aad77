import Foundation
import Testing

@testable import ResourcefulOAuth2

#if canImport(Glibc)
    import Glibc
#endif

/// A held lock stays confirmed only while its folder is the first one every process of the user
/// can use: when a folder before it becomes usable (a home folder made safe again), other
/// processes lock there, and the holder must not spend a refresh token under its own lock.
@Suite struct RefreshLockFolderChoiceTests {
    @Test func aFolderBeforeTheHeldOneThatBecomesUsableEndsTheClaim() async throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("refresh-choice-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: base) }
        let home = base + "/home", first = home + "/locks", second = base + "/second"
        // A home folder others may write in is unsafe: the lock falls back to the second folder.
        try FileManager.default.createDirectory(atPath: first, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        #expect(chmod(home, 0o775) == 0)
        let name = RefreshLock.fileName(service: "s")
        let file = try RefreshLock.openFile(service: "s", folders: [first, second]).get()
        defer { file.close() }
        #expect(file.folder == second)
        #expect(RefreshLock.isFirstUsable(second, name: name, folders: [first, second]))
        // Made safe again: the other processes now lock in the first folder.
        #expect(chmod(home, 0o755) == 0)
        #expect(!RefreshLock.isFirstUsable(second, name: name, folders: [first, second]))
        // Absent, where it can be made: the next process makes it and locks there.
        // (Asking made the lock file there, as the next process would.)
        try FileManager.default.removeItem(atPath: first)
        #expect(!RefreshLock.isFirstUsable(second, name: name, folders: [first, second]))
        // Where its lock file cannot be opened (a folder in its place, as a read-only file system
        // or a planted entry leaves it): the processes fall back as the holder did.
        try FileManager.default.removeItem(atPath: first)
        #expect(mkdir(first, 0o700) == 0 && mkdir(first + "/" + name, 0o700) == 0)
        #expect(RefreshLock.isFirstUsable(second, name: name, folders: [first, second]))
        // Where it cannot be made (under a file): likewise.
        #expect(FileManager.default.createFile(atPath: base + "/file", contents: Data()))
        #expect(RefreshLock.isFirstUsable(second, name: name, folders: [base + "/file/locks", second]))
    }
}
