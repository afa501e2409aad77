import Dispatch
import Foundation
import HTTPTypes
@testable import Resourceful
import ResourcefulTesting
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The `file` storage on a file system that does not answer (a hung NFS or FUSE mount): a call
/// fails with a time-out at its deadline, and no thread of the cooperative pool waits for the
/// file system meanwhile.
@Suite struct FileStorageDeadlineTests {
    /// A FIFO whose opening for reading blocks in the kernel until a writer comes: a file system
    /// call that does not return, as on a hung mount.
    final class BlockingFile: Sendable {
        let directory: URL
        let fifo: String
        /// How many threads are inside `open` now, and how many ever entered it.
        let inside = Atomic<Int>(0)
        let entered = Atomic<Int>(0)

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("hung-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            fifo = directory.appendingPathComponent("fifo").path
            guard mkfifo(fifo, 0o600) == 0 else { throw POSIXError(.EIO) }
        }

        /// Blocks until a writer opens the FIFO, then fails as an unreadable file.
        func openBlocking<T>() throws(AuthenticationStorageError) -> T {
            inside.add(1, ordering: .sequentiallyConsistent)
            entered.add(1, ordering: .sequentiallyConsistent)
            let descriptor = open(fifo, O_RDONLY | O_CLOEXEC)
            if descriptor >= 0 { close(descriptor) }
            inside.subtract(1, ordering: .sequentiallyConsistent)
            throw AuthenticationStorageError(kind: .unreadable, source: "file \(fifo)", detail: "released")
        }

        var access: CredentialFileAccess {
            CredentialFileAccess(
                identity: { _ throws(AuthenticationStorageError) in try self.openBlocking() },
                load: { _, _, _ throws(AuthenticationStorageError) in try self.openBlocking() }
            )
        }

        /// Lets every blocked `open` return, polling until none is left inside.
        func release() {
            for _ in 0..<5000 where inside.load(ordering: .sequentiallyConsistent) > 0 {
                let writer = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
                if writer >= 0 { close(writer) }
                usleep(1000)
            }
        }

        /// Releases every blocked `open` after `seconds`, on a thread of its own: a test of code
        /// that blocks the cooperative pool ends instead of hanging.
        func release(afterSeconds seconds: Int) {
            DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(seconds)) { self.release() }
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    @Test(.timeLimit(.minutes(2)))
    func aFileThatNeverAnswersFailsTheCallAtItsDeadlineAndHoldsNoPoolThread() async throws {
        let file = try BlockingFile()
        defer { file.release(); file.remove() }
        file.release(afterSeconds: 60)
        try await Harness.run { harness in
            harness.dependencies.authenticationStorage = FileAuthenticationStorage(
                directory: file.directory.path, scheme: "Bearer", refreshInterval: .zero, maximumBytes: 1024, logger: nil,
                access: file.access
            )
            let timeout = Duration.seconds(2)
            harness.dependencies.apiConfig.timeout = timeout
            let api = harness.api
            let start = ContinuousClock.now
            // More calls than the cooperative pool has threads: each would hold one in `open`.
            let calls = (0..<(ProcessInfo.processInfo.activeProcessorCount + 2)).map { _ in
                Task { try await api.call(AdHocRequest<Empty, Empty>(.show, "x")) }
            }
            while file.entered.load(ordering: .sequentiallyConsistent) == 0 && ContinuousClock.now < start + .seconds(60) {
                try await Task.sleep(for: .milliseconds(5))
            }
            // Work that needs a pool thread runs while the file system does not answer: it ends
            // while the `open` is still blocked (released only 60 s later), which it could not
            // if the blocked reads held the pool's threads.
            let other = await Task { (1...1000).reduce(0, +) }.value
            #expect(other == 500_500)
            #expect(file.inside.load(ordering: .sequentiallyConsistent) == 1, "the cooperative pool was free while the file was being read")
            for call in calls {
                let result = await call.result
                guard case .failure(let error as APIError) = result else {
                    Issue.record("expected an APIError, got \(result)")
                    continue
                }
                #expect(error.kind == .timeout)
            }
            #expect(ContinuousClock.now - start >= timeout - .milliseconds(100))
            // The deadline ended the calls, not the release 60 s later: the `open` still blocks.
            #expect(file.inside.load(ordering: .sequentiallyConsistent) == 1, "the deadline ended the calls, not the release")
            #expect(harness.server.requests.isEmpty)
            // One thread waits on the file, however many calls asked for it.
            #expect(file.entered.load(ordering: .sequentiallyConsistent) == 1)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aSecretFileThatNeverAnswersFailsAtTheLookupDeadline() async throws {
        let file = try BlockingFile()
        defer { file.release(); file.remove() }
        file.release(afterSeconds: 40)
        let storage = FileAuthenticationStorage(
            directory: file.directory.path, scheme: nil, refreshInterval: .zero, maximumBytes: 1024, logger: nil, access: file.access
        )
        let deadline = ContinuousClock.now + .seconds(2)
        let error = await #expect(throws: APIError.self) {
            try await CredentialLookup.$deadline.withValue(deadline) { try await storage.secret(named: "client-secret") }
        }
        #expect(error?.kind == .timeout)
        #expect(ContinuousClock.now >= deadline)
        // No `open` has returned (they are released only 40 s later): the deadline ended the wait.
        #expect(
            file.inside.load(ordering: .sequentiallyConsistent) == file.entered.load(ordering: .sequentiallyConsistent),
            "the deadline ended the wait, not the release"
        )
    }

    @Test func aRealFileIsReadThroughTheCallAndAfterItChanges() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("secrets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent(Harness.service)
        try Data("file-token-1\n".utf8).write(to: file)
        chmod(file.path, 0o600)
        try await Harness.run { harness in
            harness.dependencies.authenticationStorage = FileAuthenticationStorage(directory: directory.path, refreshInterval: .zero)
            harness.server.stub(.get, "/v1/x", .status(.noContent))
            _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x"))
            let staging = directory.appendingPathComponent(".staging")
            try Data("file-token-2\n".utf8).write(to: staging)
            chmod(staging.path, 0o600)
            #expect(rename(staging.path, file.path) == 0)
            _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x"))
            #expect(harness.server.requests.map { $0.headerFields[.authorization] } == ["Bearer file-token-1", "Bearer file-token-2"])
        }
    }
}
