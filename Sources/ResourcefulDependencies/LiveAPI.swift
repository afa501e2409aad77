import Resourceful

/// The live ``API`` of an ``APIDependency``: made once, by the first call that needs it, while
/// the others wait for the same making; shut down once.
final class LiveAPI: Sendable {
    private enum State {
        case idle
        case making(Task<API, any Error>)
        case made(API)
        case shutDown(Task<Void, any Error>)
    }

    private let make: @Sendable () async throws -> API
    private let state = Locked(State.idle)

    init(make: @escaping @Sendable () async throws -> API) {
        self.make = make
    }

    /// The API, made now when it is not yet; a making that failed is tried again by the next
    /// caller. A caller cancelled while it waits stops waiting at once; the making goes on for
    /// the others.
    func api() async throws -> API {
        let found: Result<API, any Error>? = state.withLock { state in
            switch state {
            case .made(let api): .success(api)
            case .shutDown: .failure(Self.shutDownError)
            case .making, .idle: nil
            }
        }
        if let found { return try found.get() }
        let making: Task<API, any Error> = try state.withLock { state in
            switch state {
            case .made(let api):
                return Task.detached { api }
            case .making(let task):
                return task
            case .idle:
                // Detached: it is every caller's, so it takes none of the first one's task-local
                // values (a request's own overrides, its trace) and none of its cancellation.
                let task = Task.detached { [make] in try await make() }
                state = .making(task)
                return task
            case .shutDown:
                throw Self.shutDownError
            }
        }
        do {
            let api = try await Self.value(of: making)
            return try state.withLock { state in
                switch state {
                case .making(let task) where task == making:
                    state = .made(api)
                    return api
                case .made(let made):
                    return made
                case .making, .idle:
                    return api
                case .shutDown:
                    // Shut down while it was being made: ``shutdown()`` ends it once made.
                    throw Self.shutDownError
                }
            }
        } catch {
            // A making that failed is tried again by the next caller; one this caller stopped
            // waiting for goes on, for the others, and its API is kept (or ended) when it is made.
            if !Task.isCancelled {
                state.withLock { state in
                    if case .making(let task) = state, task == making { state = .idle }
                }
            }
            throw error
        }
    }

    /// `task`'s value, or `CancellationError` as soon as the caller is cancelled.
    private static func value(of task: Task<API, any Error>) async throws -> API {
        let outcome = Outcome<API>()
        let forward = Task {
            do {
                outcome.settle(.success(try await task.value))
            } catch {
                outcome.settle(.failure(error))
            }
        }
        defer { forward.cancel() }
        return try await outcome.value(deadline: nil)
    }

    private static var shutDownError: APIError {
        APIError(kind: .cancelled, detail: "the API was shut down: a call through this dependency after its shutdown")
    }

    /// Ends the API once, however many callers ask at once: each waits for the one shutdown.
    /// An API still being made is ended when it is ready, without waiting for it (its making is
    /// cancelled). Calls after it fail.
    func shutdown() async throws {
        let ending: Task<Void, any Error> = state.withLock { state in
            switch state {
            case .shutDown(let ending):
                return ending
            case .made(let api):
                let ending = Task.detached { try await api.shutdown() }
                state = .shutDown(ending)
                return ending
            case .making(let task):
                task.cancel()
                Task.detached { if let api = try? await task.value { try? await api.shutdown() } }
                let ending = Task<Void, any Error> {}
                state = .shutDown(ending)
                return ending
            case .idle:
                let ending = Task<Void, any Error> {}
                state = .shutDown(ending)
                return ending
            }
        }
        try await ending.value
    }
}
