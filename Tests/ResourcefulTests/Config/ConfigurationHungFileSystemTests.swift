import Foundation
import HTTPTypes
@testable import Resourceful
import ResourcefulTesting
import Testing

/// A configuration file, or a file a command reads (`--data @file`), on a file system that does
/// not answer (a FUSE mount without a daemon, as a hung network mount behaves): reading it ends
/// within its bound with a typed error naming the file, and holds a thread of its own, never the
/// caller's. In the hung file system's suite, whose tests run one at a time.
extension HungFileSystemTests {
    @Test(.timeLimit(.minutes(2)))
    func aConfigurationOnAFileSystemThatHangsFailsInTime() async throws {
        try await HungFileSystem.with { folder in
            let start = ContinuousClock.now
            let error = await #expect(throws: APIError.self) {
                _ = try await APIConfig.load(environment: "x", configDirectory: folder.path, environmentVariables: [:])
            }
            #expect(error?.kind == .invalidConfiguration)
            let underlying = error?.underlying as? APIConfigError
            #expect(underlying?.kind == .unanswered, "\(String(describing: error))")
            #expect(error?.description.contains(folder.path) == true && error?.description.contains("did not answer") == true)
            // The bound, and as long again for a loaded machine: the file system never answers.
            #expect(ContinuousClock.now - start < APIConfig.fileWait * 2 + .seconds(1))
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aFileReadWithADeadlineOnAFileSystemThatHangsFailsByIt() async throws {
        try await HungFileSystem.with { folder in
            let path = folder.appendingPathComponent("data.json", isDirectory: false).path
            let wait = Duration.seconds(1)
            let start = ContinuousClock.now
            let error = await #expect(throws: RegularFileReadError.self) {
                _ = try await readRegularFile(path, maximumBytes: 1 << 20, until: .now + wait)
            }
            #expect(error?.reason.contains("did not answer") == true)
            #expect(ContinuousClock.now - start < wait * 2 + .seconds(1))
        }
    }
}

extension HungFileSystemTests {
    /// An optional file storage on a file system that does not answer is given half the call's
    /// time: the next storage answers, and the call is made before its deadline.
    @Test(.timeLimit(.minutes(2)))
    func anOptionalFileStorageThatHangsLeavesTheNextOneTheRestOfTheTime() async throws {
        try await HungFileSystem.with { folder in
            try await Harness.run { (harness: inout Harness) async throws in
                harness.server.stub(.get, "/v1/me", .json(raw: #"{"ok": true}"#))
                let timeout = Duration.seconds(4)
                harness.dependencies.apiConfig.timeout = timeout
                let token = ["RESOURCEFUL_AUTH_TEST_API_TOKEN": "from-the-environment-8b1"]
                harness.dependencies.authenticationStorage = ChainedAuthenticationStorage([
                    .init("file", FileAuthenticationStorage(directory: folder.path), isOptional: true),
                    .init("environment", EnvironmentAuthenticationStorage(environment: token)),
                ], logger: harness.dependencies.logger)
                let api = harness.api
                let start = ContinuousClock.now
                _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "me"))
                #expect(ContinuousClock.now - start < timeout)
                #expect(harness.server.requests.first?.headerFields[.authorization] == "Bearer from-the-environment-8b1")
                #expect(harness.logText.contains("Credential storage failed"))
            }
        }
    }
}
