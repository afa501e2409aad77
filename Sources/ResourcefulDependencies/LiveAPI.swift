import Resourceful

/// The live ``API`` of an ``APIDependency``: made once, by the first call that needs it, while
/// the others wait for the same making; shut down once.
final class LiveAPI: Sendable {
    private enum State {
        case idle
        case making(Task<API, any Error>)
        case made(API)
        case shutDown
    }

    private let make: @Sendable () async throws -> API
    private let state = Locked(State.idle)

    init(make: @escaping @Sendable () async throws -> API) {
        self.make = make
    }

    /// The API, made now when it is not yet; a making that failed is tried again by the next
    /// caller.
    func api() async throws -> API {
        enum Found {
            case ready(API)
            case wait(Task<API, any Error>)
        }
        let found: Found = try state.withLock { state in
            switch state {
            case .made(let api):
                return .ready(api)
            case .making(let task):
                return .wait(task)
            case .idle:
                let make = self.make
                let task = Task { try await make() }
                state = .making(task)
                return .wait(task)
            case .shutDown:
                throw Self.shutDownError
            }
        }
        guard case .wait(let making) = found else {
            if case .ready(let api) = found { return api }
            throw Self.shutDownError
        }
        do {
            let api = try await making.value
            // Shut down while it was being made: ``shutdown()`` waited for it and ended it.
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
                    throw Self.shutDownError
                }
            }
        } catch {
            state.withLock { state in
                if case .making(let task) = state, task == making { state = .idle }
            }
            throw error
        }
    }

    private static var shutDownError: APIError {
        APIError(kind: .cancelled, detail: "the API was shut down")
    }

    /// Ends the API once: calls after it fail; one being made is ended when it is ready.
    func shutdown() async throws {
        let previous = state.withLock { state -> State in
            defer { state = .shutDown }
            return state
        }
        switch previous {
        case .made(let api): try await api.shutdown()
        case .making(let task): if let api = try? await task.value { try await api.shutdown() }
        case .idle, .shutDown: break
        }
    }
}
