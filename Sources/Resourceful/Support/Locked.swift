import NIOConcurrencyHelpers

/// The package's one lock: a value reached only under a lock.
///
/// It is NIO's lock rather than the standard library's `Mutex` because ThreadSanitizer (which
/// `make test-tsan` runs) understands a pthread mutex and not `Mutex`'s futex: with `Mutex`,
/// every value handed from one thread to another under the lock reads as a data race.
package struct Locked<Value: Sendable>: Sendable {
    private let box: NIOLockedValueBox<Value>

    /// Creates a lock around `value`.
    package init(_ value: Value) {
        box = NIOLockedValueBox(value)
    }

    /// A copy of the value, read under the lock.
    package var value: Value {
        box.withLockedValue { $0 }
    }

    /// Runs `body` with the value, holding the lock.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try box.withLockedValue(body)
    }
}
