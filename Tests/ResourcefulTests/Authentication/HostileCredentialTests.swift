import Foundation
import Logging
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Credential files that are not files, and storages that never answer: each fails the call
/// within its bound, with a typed error, and never holds a thread of the cooperative pool.
@Suite struct HostileCredentialTests {
    /// A scratch directory in which `prepare` puts something at `<directory>/test-api`.
    private func storage(_ prepare: (String) throws -> Void) throws -> (FileAuthenticationStorage, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try prepare(directory.appendingPathComponent(Harness.service).path)
        return (FileAuthenticationStorage(directory: directory.path), directory)
    }

    static let cases: [(name: String, prepare: @Sendable (String) throws -> Void)] = [
        ("fifo", { path in
            guard mkfifo(path, 0o600) == 0 else { throw POSIXError(.EIO) }
        }),
        ("directory", { path in try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false) }),
        ("symlink to /dev/zero", { path in try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "/dev/zero") }),
        ("symlink loop", { path in
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: path + ".loop")
            try FileManager.default.createSymbolicLink(atPath: path + ".loop", withDestinationPath: path)
        }),
        ("dangling symlink", { path in try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: path + ".gone") }),
    ]

    @Test(arguments: cases)
    func aCredentialPathThatIsNotAFileFailsTheCallAtOnce(name: String, prepare: @Sendable (String) throws -> Void) async throws {
        let (storage, directory) = try storage(prepare)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await Harness.run { harness in
            harness.dependencies.authenticationStorage = storage
            let deadline = Duration.seconds(120)
            harness.dependencies.apiConfig.timeout = deadline
            let start = ContinuousClock.now
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x")) }
            // At once, not at the deadline or never (a FIFO blocked for ever): half the deadline
            // leaves a loaded machine room.
            #expect(ContinuousClock.now - start < deadline / 2, "\(name) took too long")
            #expect(error?.kind == .authentication)
            #expect(error?.underlying is AuthenticationStorageError)
            // The package's own storage error says what is wrong in the call's error.
            #expect(error?.description.contains(directory.path) == true, "\(name): \(String(describing: error))")
            #expect(harness.server.requests.isEmpty)
        }
    }

    /// A storage of the app's own that never answers.
    struct Hanging: AuthenticationStorage {
        let entered = Event()
        func authenticationHeader(for service: String) async throws -> String? {
            entered.happen()
            try await Task.sleep(for: .seconds(3600))
            return nil
        }
    }

    @Test func aStorageThatNeverAnswersEndsAtTheCallsDeadline() async throws {
        try await Harness.run { harness in
            harness.dependencies.authenticationStorage = Hanging()
            let deadline = Duration.milliseconds(300)
            harness.dependencies.apiConfig.timeout = deadline
            let start = ContinuousClock.now
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x")) }
            #expect(error?.kind == .timeout)
            // A few times the deadline and a minute for a loaded machine; the storage hangs an hour.
            #expect(ContinuousClock.now - start < deadline * 10 + .seconds(60))
            #expect(harness.server.requests.isEmpty)
        }
    }

    @Test func cancellingTheCallerEndsAHangingLookup() async throws {
        try await Harness.run { harness in
            let hanging = Hanging()
            harness.dependencies.authenticationStorage = ChainedAuthenticationStorage([.init("app", hanging)], logger: .init(label: "test"))
            let api = harness.api
            let call = Task { try await api.call(AdHocRequest<Empty, Empty>(.show, "x")) }
            await hanging.entered.wait()
            call.cancel()
            let start = ContinuousClock.now
            let result = await call.result
            // Ended by the cancellation, not by the deadline (30 s) or the storage (an hour): half
            // the deadline leaves a loaded machine room.
            #expect(ContinuousClock.now - start < .seconds(15))
            guard case .failure(let error as APIError) = result else { Issue.record("expected an APIError"); return }
            #expect(error.kind == .cancelled)
        }
    }
}
