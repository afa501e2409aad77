import Synchronization

/// Something that happens once, awaited with a bound. Tests wait on it instead of polling: a
/// polling loop holds one of the few cooperative threads the other tests run on.
public final class Event: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    private let happened = Atomic(false)

    /// Whether the event has happened.
    public var hasHappened: Bool { happened.load(ordering: .acquiring) }

    /// An event that has not happened.
    public init() {
        (stream, continuation) = AsyncStream.makeStream()
    }

    /// Marks the event as happened; later calls change nothing.
    public func happen() {
        happened.store(true, ordering: .releasing)
        continuation.yield()
        continuation.finish()
    }

    /// Returns when the event has happened, or after `timeout`; awaited by one task.
    public func wait(timeout: Duration = .seconds(10)) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { for await _ in self.stream { return } }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }
}
