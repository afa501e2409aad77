import Foundation
import HTTPTypes
@preconcurrency import OpenCombineShim
import ProcessTestSupport
import Resourceful
import ResourcefulCombine
import ResourcefulTesting
import Synchronization
import Testing

@Suite struct APIPublisherTests {
    struct Item: Codable, Equatable, Sendable { var id: Int }

    /// What a subscriber saw.
    final class Recorder: Sendable {
        let values = Locked<[Item]>([])
        let completion = Locked<Subscribers.Completion<APIError>?>(nil)
        let completed = Event()

        func wait() async { await completed.wait() }
    }

    private func subscribe(_ publisher: AnyPublisher<Item, APIError>, to recorder: Recorder) -> AnyCancellable {
        publisher.sink(
            receiveCompletion: { completion in
                recorder.completion.withLock { $0 = completion }
                recorder.completed.happen()
            },
            receiveValue: { value in recorder.values.withLock { $0.append(value) } }
        )
    }

    private func api(_ server: MockServer, _ transport: AsyncHTTPClientTransport) -> API {
        API(dependencies: APIDependencies(apiConfig: APIConfig(baseURL: server.baseURL, service: "s"), transport: transport))
    }

    @Test func coldSingleValue() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.get, "/items/1", try .json(Item(id: 1)))
            let api = api(server, transport)
            let publisher = api.publisher(for: AdHocRequest<Item, Resourceful.Empty>(.show, "items/1"))
            #expect(server.requests.isEmpty)
            let recorder = Recorder()
            let cancellable = subscribe(publisher, to: recorder)
            await recorder.wait()
            #expect(recorder.values.withLock { $0 } == [Item(id: 1)])
            let finished = recorder.completion.withLock { completion in
                if case .finished = completion { return true }
                return false
            }
            #expect(finished)
            let again = Recorder()
            let second = subscribe(publisher, to: again)
            await again.wait()
            #expect(server.requests.count == 2)
            cancellable.cancel()
            second.cancel()
        }
    }

    @Test func failureCarriesTheAPIError() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.get, "/items/2", .status(.notFound))
            let api = api(server, transport)
            let recorder = Recorder()
            let cancellable = subscribe(api.publisher(for: AdHocRequest<Item, Resourceful.Empty>(.show, "items/2")), to: recorder)
            await recorder.wait()
            guard case .failure(let error) = recorder.completion.withLock({ $0 }) else {
                Issue.record("no failure")
                return
            }
            #expect(error.kind == .unacceptableStatus)
            #expect(error.status == .notFound)
            #expect(recorder.values.withLock { $0 }.isEmpty)
            cancellable.cancel()
        }
    }

    @Test func cancellingTheSubscriptionCancelsTheCall() async throws {
        let cancelled = Atomic<Bool>(false)
        let started = Event(), ended = Event()
        let stub = StubTransport { _ in
            started.happen()
            do {
                try await Task.sleep(for: .seconds(30))
            } catch {
                cancelled.store(true, ordering: .releasing)
                ended.happen()
                throw error
            }
            return TransportResponse(status: .ok)
        }
        let api = API(dependencies: APIDependencies(apiConfig: APIConfig(baseURL: URL(string: "http://example.invalid")!, service: "s"), transport: stub))
        let recorder = Recorder()
        let cancellable = subscribe(api.publisher(for: AdHocRequest<Item, Resourceful.Empty>(.show, "slow")), to: recorder)
        await started.wait()
        cancellable.cancel()
        await ended.wait()
        let wasCancelled = cancelled.load(ordering: .acquiring)
        #expect(wasCancelled)
        #expect(recorder.values.withLock { $0 }.isEmpty)
        #expect(recorder.completion.withLock { $0 == nil })
    }
}
