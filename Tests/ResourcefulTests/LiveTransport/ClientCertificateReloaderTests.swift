import Dispatch
import Foundation
import Logging
import NIOSSL
@testable import Resourceful
import Testing

/// `ClientCertificateReloader` looks at the certificate files on a thread of its own: a file
/// system that does not answer (a hung network mount) holds that thread, never the requests,
/// the lock they take, or the cooperative pool.
@Suite struct ClientCertificateReloaderTests {
    /// A look at the files that blocks from its `blockFrom`th call on until `release()`.
    final class HungFileSystem: Sendable {
        let calls = Locked(0)
        private let gate = DispatchSemaphore(value: 0)
        let blockFrom: Int

        init(blockFrom: Int) {
            self.blockFrom = blockFrom
        }

        func identify(_ tls: APIConfig.TLSSettings) -> [CredentialFile.Identity?] {
            let number = calls.withLock { count in
                count += 1
                return count
            }
            if number >= blockFrom { gate.wait() }
            return [nil, nil]
        }

        func release(_ count: Int) {
            for _ in 0..<count { gate.signal() }
        }
    }

    static func reloader(_ files: HungFileSystem, maximumWait: Duration) -> ClientCertificateReloader {
        var settings = APIConfig.HTTPSettings()
        settings.tls = APIConfig.TLSSettings(clientCertificateFile: "/nonexistent/tls.crt", clientKeyFile: "/nonexistent/tls.key")
        return ClientCertificateReloader(
            settings: settings, environment: [:], configuration: TLSConfiguration.makeClientConfiguration(), interval: .zero,
            maximumWait: maximumWait, logger: Logger(label: "test"), identify: { files.identify($0) }
        )
    }

    @Test func requestsGoOnWithThePairInUseWhileALookAtTheFilesHangs() async throws {
        // The first call is the reloader's own, when it is made; the second, the first look, hangs.
        let files = HungFileSystem(blockFrom: 2)
        let reloader = Self.reloader(files, maximumWait: .milliseconds(200))
        let start = ContinuousClock.now
        // More requests than the cooperative pool has threads: before, the first held the lock
        // inside `stat` and every other one waited on it, the pool's threads with them.
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<64 {
                group.addTask { _ = await reloader.configuration() }
            }
        }
        // A wait for ever is what this breaks; a loaded machine's scheduling is not.
        #expect(ContinuousClock.now - start < .seconds(30))
        // One look under way at a time: one thread held, not one per request.
        #expect(files.calls.withLock { $0 } == 2)
        files.release(1)
        // Once it ended, the next request looks again.
        let giveUp = ContinuousClock.now + .seconds(30)
        while files.calls.withLock({ $0 }) < 3, ContinuousClock.now < giveUp {
            _ = await reloader.configuration()
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(files.calls.withLock { $0 } >= 3)
        files.release(1_000)
    }

    @Test func aRequestWaitsForALookNoLongerThanItsDeadline() async throws {
        let files = HungFileSystem(blockFrom: 2)
        let reloader = Self.reloader(files, maximumWait: .seconds(600))
        let start = ContinuousClock.now
        _ = await reloader.configuration(deadline: .now + .milliseconds(100))
        #expect(ContinuousClock.now - start < .seconds(30))
        files.release(1_000)
    }

    @Test func aReloaderMadeWhileTheFilesDoNotAnswerIsMadeInTime() async throws {
        // Its first look at the files, made by its synchronous `init`, hangs (a hung mount).
        let files = HungFileSystem(blockFrom: 1)
        // Released in the end, so that a wait for ever fails the test rather than hang it.
        let release = Task.detached {
            try? await Task.sleep(for: .seconds(40))
            files.release(1_000)
        }
        defer { release.cancel() }
        let start = ContinuousClock.now
        let reloader = Self.reloader(files, maximumWait: .milliseconds(200))
        #expect(ContinuousClock.now - start < .seconds(20), "making the reloader waited for the file system")
        // Requests go on with the pair it was given.
        _ = await reloader.configuration(deadline: .now + .milliseconds(100))
        files.release(1_000)
    }
}
