import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

/// The waits on a cache storage of one pass through the cache share one budget: a storage that
/// answers each step just before ``HTTPCacheMiddleware/storageTimeout`` holds a call for that
/// time once, not once per step.
@Suite struct HTTPCacheStorageBudgetTests {
    struct Document: Codable, Sendable, Equatable { var version: String }

    /// A storage that answers every call after `delay` (sooner when cancelled), from memory.
    final class SlowStorage: HTTPCacheStorage {
        let delay: Duration
        let inner = InMemoryHTTPCacheStorage()
        let answered = Locked<[String]>([])

        init(delay: Duration) {
            self.delay = delay
        }

        private func wait(_ operation: String) async -> Bool {
            do {
                try await Task.sleep(for: delay)
            } catch {
                return false
            }
            answered.withLock { $0.append(operation) }
            return true
        }

        func entry(forKey key: String) async -> HTTPCacheEntry? {
            guard await wait("entry") else { return nil }
            return await inner.entry(forKey: key)
        }

        func store(_ entry: HTTPCacheEntry, forKey key: String) async {
            guard await wait("store") else { return }
            await inner.store(entry, forKey: key)
        }

        func removeEntry(forKey key: String) async {
            guard await wait("remove") else { return }
            await inner.removeEntry(forKey: key)
        }

        func updateEntry(forKey key: String, _ update: (HTTPCacheEntry?) -> HTTPCacheEntry?) async -> HTTPCacheEntry? {
            guard await wait("update") else { return nil }
            return await inner.updateEntry(forKey: key, update)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aStorageAnsweringEachStepJustInTimeHoldsTheCallForOneTimeOutInAll() async throws {
        let timeout = Duration.seconds(10)
        // Each answer comes at 70% of the time-out (the rest is slack for a loaded machine): a
        // lookup then a store, each waited for in full, would hold the call for 140% of it. The
        // store given up is left to end on its own, 40% of the time-out after the call could
        // return: the time-out is long enough that a loaded machine does not delay the call's
        // return past it.
        let storage = SlowStorage(delay: timeout * 0.7)
        try await Harness.run(authorization: nil) { (harness: inout Harness) async throws in
            harness.server.route(.get, "/v1/doc") { _ in
                var response = try MockResponse.json(Document(version: "v1"))
                response.headerFields[.cacheControl] = "max-age=60"
                return response
            }
            harness.dependencies.apiConfig.timeout = .seconds(60)
            let cache = HTTPCacheMiddleware(storage: storage, storageTimeout: timeout)
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [cache])
            #expect(try await api.call(AdHocRequest<Document, Empty>(.show, "doc")) == Document(version: "v1"))
            // The lookup spent most of the budget: the store is given up, not waited for in full
            // (waited for, it would have answered too). Asserted by what the storage answered, not
            // by the call's duration, which a loaded machine's network round trip would blur.
            #expect(storage.answered.withLock { $0 } == ["entry"])
            #expect(harness.logText.contains("storage-timeout"))
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aStorageWithinTheBudgetIsWaitedFor() async throws {
        let timeout = Duration.seconds(10)
        let storage = SlowStorage(delay: .milliseconds(50))
        try await Harness.run(authorization: nil) { (harness: inout Harness) async throws in
            harness.server.route(.get, "/v1/doc") { _ in
                var response = try MockResponse.json(Document(version: "v1"))
                response.headerFields[.cacheControl] = "max-age=60"
                return response
            }
            harness.dependencies.apiConfig.timeout = .seconds(60)
            let cache = HTTPCacheMiddleware(storage: storage, storageTimeout: timeout)
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [cache])
            for _ in 0..<2 {
                #expect(try await api.call(AdHocRequest<Document, Empty>(.show, "doc")) == Document(version: "v1"))
            }
            #expect(storage.answered.withLock { $0 } == ["entry", "update", "entry"])
            #expect(harness.server.requests.count == 1)
            #expect(!harness.logText.contains("storage-timeout"))
        }
    }
}
