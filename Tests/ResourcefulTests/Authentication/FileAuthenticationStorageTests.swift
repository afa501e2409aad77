import Foundation
import Resourceful
import ResourcefulTesting
import Testing

@Suite struct FileAuthenticationStorageTests {
    /// A fresh directory of secrets, removed afterwards.
    struct Secrets {
        let directory: URL

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("secrets-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }

        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

        /// Writes `name` the way orchestrators do: a new file renamed over the old one.
        func replace(_ name: String, with contents: String) throws {
            let staging = directory.appendingPathComponent(".staging-\(UUID().uuidString)")
            try Data(contents.utf8).write(to: staging)
            guard rename(staging.path, path(name)) == 0 else { throw POSIXError(.EIO) }
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    @Test func readsTheTokenWithoutTrailingNewlines() async throws {
        let secrets = try Secrets()
        defer { secrets.remove() }
        try secrets.replace("billing", with: "tok-1\n\n")
        #expect(try await FileAuthenticationStorage(directory: secrets.directory.path).authenticationHeader(for: "billing") == "Bearer tok-1")
        try secrets.replace("ledger", with: "Basic dXNlcjpwYXNz\r\n")
        #expect(try await FileAuthenticationStorage(directory: secrets.directory.path, scheme: nil).authenticationHeader(for: "ledger") == "Basic dXNlcjpwYXNz")
    }

    @Test func missingFileAndMissingDirectoryNameThePath() async throws {
        let secrets = try Secrets()
        defer { secrets.remove() }
        let storage = FileAuthenticationStorage(directory: secrets.directory.path)
        let missing = await #expect(throws: AuthenticationStorageError.self) { _ = try await storage.authenticationHeader(for: "billing") }
        #expect(missing?.kind == .missing)
        #expect(missing?.description == "file \(secrets.path("billing")): does not exist")

        let nowhere = FileAuthenticationStorage(directory: secrets.path("absent"))
        let noDirectory = await #expect(throws: AuthenticationStorageError.self) { _ = try await nowhere.authenticationHeader(for: "billing") }
        #expect(noDirectory?.kind == .missing)
        #expect(noDirectory?.description.contains("its directory \(secrets.path("absent")) does not exist") == true)
    }

    @Test func emptyFilesAndLineBreaksInsideAreRefused() async throws {
        let secrets = try Secrets()
        defer { secrets.remove() }
        let storage = FileAuthenticationStorage(directory: secrets.directory.path)
        try secrets.replace("empty", with: "\n")
        let empty = await #expect(throws: AuthenticationStorageError.self) { _ = try await storage.authenticationHeader(for: "empty") }
        #expect(empty?.kind == .empty)
        try secrets.replace("split", with: "s3cr3t-part\nX-Injected: 1")
        let split = await #expect(throws: AuthenticationStorageError.self) { _ = try await storage.authenticationHeader(for: "split") }
        #expect(split?.kind == .invalidValue)
        #expect(!String(describing: split).contains("s3cr3t"))
    }

    @Test func aTenMegabyteFileIsRefusedWithoutBeingRead() async throws {
        let secrets = try Secrets()
        defer { secrets.remove() }
        #expect(FileManager.default.createFile(atPath: secrets.path("huge"), contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: secrets.path("huge")))
        try handle.truncate(atOffset: 10 * 1024 * 1024)
        try handle.close()
        let storage = FileAuthenticationStorage(directory: secrets.directory.path)
        let error = await #expect(throws: AuthenticationStorageError.self) { _ = try await storage.authenticationHeader(for: "huge") }
        #expect(error?.kind == .tooLarge)
        #expect(error?.description == "file \(secrets.path("huge")): holds 10485760 bytes, over the limit of 65536")
    }

    @Test func aDirectoryOrAPathInTheServiceNameIsNotACredential() async throws {
        let secrets = try Secrets()
        defer { secrets.remove() }
        try FileManager.default.createDirectory(atPath: secrets.path("folder"), withIntermediateDirectories: false)
        let storage = FileAuthenticationStorage(directory: secrets.directory.path)
        let folder = await #expect(throws: AuthenticationStorageError.self) { _ = try await storage.authenticationHeader(for: "folder") }
        #expect(folder?.kind == .unreadable)
        for service in ["../etc/passwd", "..", "a/b", ""] {
            let escape = await #expect(throws: AuthenticationStorageError.self) { _ = try await storage.authenticationHeader(for: service) }
            #expect(escape?.kind == .invalidValue)
        }
    }

    @Test func rotationByRenameIsSeenOnTheNextCheck() async throws {
        let secrets = try Secrets()
        defer { secrets.remove() }
        let storage = FileAuthenticationStorage(directory: secrets.directory.path, refreshInterval: .zero)
        try secrets.replace("billing", with: "first")
        #expect(try await storage.authenticationHeader(for: "billing") == "Bearer first")
        try secrets.replace("billing", with: "second")
        #expect(try await storage.authenticationHeader(for: "billing") == "Bearer second")
    }

    /// Kubernetes mounts `<dir>/<key>` → `..data/<key>`, with `..data` → a timestamped folder, and
    /// rotates by pointing `..data` at a new folder in one rename.
    @Test func rotationBySymlinkSwapIsSeenOnTheNextCheck() async throws {
        let secrets = try Secrets()
        defer { secrets.remove() }
        func version(_ name: String, _ token: String) throws {
            try FileManager.default.createDirectory(atPath: secrets.path(name), withIntermediateDirectories: false)
            try Data(token.utf8).write(to: URL(fileURLWithPath: secrets.path("\(name)/billing")))
            try FileManager.default.createSymbolicLink(atPath: secrets.path("..data_tmp"), withDestinationPath: name)
            #expect(rename(secrets.path("..data_tmp"), secrets.path("..data")) == 0)
        }
        try version("..2026_11_22_a", "first")
        try FileManager.default.createSymbolicLink(atPath: secrets.path("billing"), withDestinationPath: "..data/billing")
        let storage = FileAuthenticationStorage(directory: secrets.directory.path, refreshInterval: .zero)
        #expect(try await storage.authenticationHeader(for: "billing") == "Bearer first")
        try version("..2026_11_22_b", "second")
        #expect(try await storage.authenticationHeader(for: "billing") == "Bearer second")
    }

    @Test func withinTheRefreshIntervalTheFileIsNotReadAgain() async throws {
        let secrets = try Secrets()
        defer { secrets.remove() }
        let storage = FileAuthenticationStorage(directory: secrets.directory.path, refreshInterval: .seconds(3600))
        try secrets.replace("billing", with: "cached")
        #expect(try await storage.authenticationHeader(for: "billing") == "Bearer cached")
        // Were the file read or even looked at, these calls would fail.
        try FileManager.default.removeItem(atPath: secrets.path("billing"))
        for _ in 0..<100 {
            #expect(try await storage.authenticationHeader(for: "billing") == "Bearer cached")
        }
    }

    @Test func readsDuringRotationNeverSeeATornValue() async throws {
        let secrets = try Secrets()
        defer { secrets.remove() }
        let versions = [String(repeating: "a", count: 8192), String(repeating: "b", count: 8192)]
        try secrets.replace("billing", with: versions[0])
        let storage = FileAuthenticationStorage(directory: secrets.directory.path, refreshInterval: .zero)
        let expected = Set(versions.map { "Bearer \($0)" })
        let torn = try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                for round in 1...300 { try secrets.replace("billing", with: versions[round % 2]) }
                return 0
            }
            for _ in 0..<3 {
                group.addTask {
                    var bad = 0
                    for _ in 0..<300 {
                        let header = try await storage.authenticationHeader(for: "billing")
                        if !expected.contains(header ?? "") { bad += 1 }
                    }
                    return bad
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(torn == 0)
    }

    @Test func passesTheConformanceSuite() async throws {
        let secrets = try Secrets()
        defer { secrets.remove() }
        let storage = FileAuthenticationStorage(directory: secrets.directory.path, scheme: nil, refreshInterval: .zero)
        try await AuthenticationStorageConformance(storage: storage, absence: .error) { header, service in
            if let header {
                try secrets.replace(service, with: header + "\n")
            } else {
                try? FileManager.default.removeItem(atPath: secrets.path(service))
            }
        }.run()
    }
}
