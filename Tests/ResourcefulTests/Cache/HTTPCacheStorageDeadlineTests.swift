import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

/// A cache storage that does not answer (a database that hangs) never holds a call: a lookup
/// that does not answer in time is a miss, a store that does not is skipped, and the call is
/// answered from the network before its deadline.
@Suite struct HTTPCacheStorageDeadlineTests {
    struct Document: Codable, Sendable, Equatable { var version: String }

    /// A storage none of whose calls returns until `release()`: one that looks at cancellation
    /// (it then returns nothing), or one that ignores it.
    final class HungStorage: HTTPCacheStorage {
        let honoursCancellation: Bool
        private let parked = Locked<[CheckedContinuation<Void, Never>]>([])
        private let released = Locked(false)
        let calls = Locked<[String]>([])

        init(honoursCancellation: Bool) {
            self.honoursCancellation = honoursCancellation
        }

        private func hang(_ operation: String) async {
            calls.withLock { $0.append(operation) }
            if honoursCancellation {
                while !Task.isCancelled, !released.withLock({ $0 }) { try? await Task.sleep(for: .seconds(3600)) }
                return
            }
            await withCheckedContinuation { continuation in
                let resumeNow = released.withLock { released in
                    if released { return true }
                    parked.withLock { $0.append(continuation) }
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }

        func entry(forKey key: String) async -> HTTPCacheEntry? {
            await hang("entry")
            return nil
        }

        func store(_ entry: HTTPCacheEntry, forKey key: String) async { await hang("store") }
        func removeEntry(forKey key: String) async { await hang("remove") }
        func updateEntry(forKey key: String, _ update: (HTTPCacheEntry?) -> HTTPCacheEntry?) async -> HTTPCacheEntry? {
            await hang("update")
            return nil
        }

        /// Lets every parked call return, so that nothing outlives the test.
        func release() {
            released.withLock { $0 = true }
            for continuation in parked.withLock({ parked in
                defer { parked = [] }; return parked
            }) { continuation.resume() }
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: [true, false])
    func aStorageThatNeverAnswersIsAMissAndTheCallIsAnsweredFromTheNetwork(honoursCancellation: Bool) async throws {
        let storage = HungStorage(honoursCancellation: honoursCancellation)
        defer { storage.release() }
        try await Harness.run(authorization: nil) { (harness: inout Harness) async throws in
            harness.server.route(.get, "/v1/doc") { _ in
                var response = try MockResponse.json(Document(version: "v1"))
                response.headerFields[.cacheControl] = "max-age=60"
                response.headerFields[.eTag] = "\"v1\""
                return response
            }
            // A deadline long enough for a loaded machine, and a short storage time-out: a
            // storage that held the call would hold it to its deadline (or for ever).
            let timeout = Duration.seconds(30)
            harness.dependencies.apiConfig.timeout = timeout
            let cache = HTTPCacheMiddleware(storage: storage, storageTimeout: .milliseconds(500))
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [cache])
            for _ in 0..<2 {
                let start = ContinuousClock.now
                #expect(try await api.call(AdHocRequest<Document, Empty>(.show, "doc")) == Document(version: "v1"))
                // A lookup given up after the storage's time-out, no store: the call is answered
                // from the network well before its deadline.
                #expect(ContinuousClock.now - start < timeout / 2)
            }
            #expect(harness.server.requests.count == 2)
            // The lookup spends the call's whole storage budget: the store is not asked for.
            #expect(storage.calls.withLock { $0 } == ["entry", "entry"])
            #expect(harness.logText.contains("storage-timeout"))
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aStorageWaitLeavesTheNetworkHalfTheTimeLeft() async throws {
        let storage = HungStorage(honoursCancellation: false)
        defer { storage.release() }
        try await Harness.run(authorization: nil) { (harness: inout Harness) async throws in
            harness.server.stub(.get, "/v1/doc", try .json(Document(version: "v2")))
            // A deadline that leaves the network (half of it) enough time on a loaded machine,
            // under the thread sanitizer too.
            let timeout = Duration.seconds(40)
            harness.dependencies.apiConfig.timeout = timeout
            // A storage time-out longer than the call: the call's deadline bounds the wait.
            let cache = HTTPCacheMiddleware(storage: storage, storageTimeout: .seconds(600))
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [cache])
            let start = ContinuousClock.now
            #expect(try await api.call(AdHocRequest<Document, Empty>(.show, "doc")) == Document(version: "v2"))
            // Half the time left for the lookup, half of the rest for the removal of the entry (the
            // answer is not storable): done before the deadline, with the answer from the network.
            // A lookup waited for up to the deadline would leave the network no time, and the call
            // would fail.
            let elapsed = ContinuousClock.now - start
            #expect(elapsed >= timeout / 2, "the lookup was waited for until half the deadline")
            #expect(elapsed < timeout)
            #expect(harness.server.requests.count == 1)
            #expect(storage.calls.withLock { $0 } == ["entry", "remove"])
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func anInvalidationThatNeverAnswersDoesNotHoldTheCall() async throws {
        let storage = HungStorage(honoursCancellation: false)
        defer { storage.release() }
        try await Harness.run(authorization: nil) { (harness: inout Harness) async throws in
            harness.server.stub(.delete, "/v1/doc", .status(.noContent))
            let timeout = Duration.seconds(30)
            harness.dependencies.apiConfig.timeout = timeout
            let cache = HTTPCacheMiddleware(storage: storage, storageTimeout: .milliseconds(500))
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [cache])
            let start = ContinuousClock.now
            _ = try await api.call(AdHocRequest<Empty, Empty>(.delete, "doc"))
            // The removal is given up after the storage's time-out, well before the deadline.
            #expect(ContinuousClock.now - start < timeout / 2)
            #expect(harness.server.requests.count == 1)
            #expect(storage.calls.withLock { $0 } == ["remove"])
        }
    }
}
