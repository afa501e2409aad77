// OpenCombine predates Sendable annotations.
@preconcurrency import OpenCombineShim
import Resourceful
import Synchronization

/// The publisher behind `API.publisher(for:)`.
struct APICallPublisher<Request: ResourceRequest>: Publisher {
    /// The decoded value.
    typealias Output = Request.ResourceType
    /// Why the call failed.
    typealias Failure = APIError

    let api: API
    let request: Request

    /// Starts a subscription that calls on first demand.
    func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
        let erased = AnySubscriber(subscriber)
        subscriber.receive(subscription: CallSubscription(api: api, request: request, subscriber: erased))
    }
}

/// One subscription: one call, started on first demand, cancelled with the subscription.
private final class CallSubscription<Request: ResourceRequest>: Subscription, Sendable {
    typealias Downstream = AnySubscriber<Request.ResourceType, APIError>

    private enum State {
        case waiting(Downstream)
        case running(Task<Void, Never>)
        case finished
    }

    private let api: API
    private let request: Request
    // The subscriber is only reached under this lock, or after being taken out of it exactly once.
    // `Mutex`, not the package's `Locked`: only `Mutex` holds a value that is not Sendable (the
    // subscriber) without an unchecked conformance.
    private let state: Mutex<State>

    init(api: API, request: Request, subscriber: Downstream) {
        self.api = api
        self.request = request
        self.state = Mutex(.waiting(subscriber))
    }

    func request(_ demand: Subscribers.Demand) {
        guard demand > 0 else { return }
        state.withLock { state in
            guard case .waiting(let subscriber) = state else { return }
            let box = SubscriberBox(subscriber)
            let task = Task { [api, request] in
                let result: Result<Request.ResourceType, APIError>
                do throws(APIError) {
                    result = .success(try await api.call(request))
                } catch {
                    result = .failure(error)
                }
                guard self.finish() else { return }
                box.deliver(result)
            }
            state = .running(task)
        }
    }

    func cancel() {
        let task: Task<Void, Never>? = state.withLock { state in
            defer { state = .finished }
            if case .running(let task) = state { return task }
            return nil
        }
        task?.cancel()
    }

    /// Marks the call done; false when the subscription was cancelled first.
    private func finish() -> Bool {
        state.withLock { state in
            guard case .running = state else { return false }
            state = .finished
            return true
        }
    }
}

/// Carries the subscriber to the task that delivers the result.
///
/// Sendable by construction: the subscriber is handed over once, when the subscription starts its
/// task, and used by that task alone after `finish()` has won against `cancel()`, so no two
/// threads ever use it at once.
private final class SubscriberBox<Output>: @unchecked Sendable {
    private let subscriber: AnySubscriber<Output, APIError>

    init(_ subscriber: AnySubscriber<Output, APIError>) {
        self.subscriber = subscriber
    }

    func deliver(_ result: Result<Output, APIError>) {
        switch result {
        case .success(let value):
            _ = subscriber.receive(value)
            subscriber.receive(completion: .finished)
        case .failure(let error):
            subscriber.receive(completion: .failure(error))
        }
    }
}
