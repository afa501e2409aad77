import Foundation

/// The file system calls a ``FileAuthenticationStorage`` makes. Each may block its thread for as
/// long as the file system does not answer (a hung network mount, a stuck FUSE daemon): they are
/// only ever made by ``CredentialFileReads``, on threads of their own. Tests put calls that block
/// in their place.
struct CredentialFileAccess: Sendable {
    /// The identity of the file at a path, following symlinks (``CredentialFile/identity(of:)``).
    var identity: @Sendable (_ path: String) throws(AuthenticationStorageError) -> CredentialFile.Identity
    /// The value and identity of the file at a path, of at most `maximumBytes`, line breaks
    /// inside allowed or not (``CredentialFile/load(_:maximumBytes:lineBreaksInside:)``).
    var load:
        @Sendable (_ path: String, _ maximumBytes: Int, _ lineBreaksInside: Bool) throws(AuthenticationStorageError) -> (
            value: String, identity: CredentialFile.Identity
        )

    /// The real file system.
    static let system = CredentialFileAccess(
        identity: { path throws(AuthenticationStorageError) in try CredentialFile.identity(of: path) },
        load: { path, maximumBytes, lineBreaksInside throws(AuthenticationStorageError) in
            try CredentialFile.load(path, maximumBytes: maximumBytes, lineBreaksInside: lineBreaksInside)
        }
    )
}

/// Blocking reads of credential files, run on threads of their own and never on the
/// cooperative pool, each waited for no longer than the caller's deadline.
///
/// A read that does not end (a hung mount) keeps its thread, but no task's: the caller gets
/// ``APIError/Kind/timeout`` at its deadline, or `CancellationError` when it is cancelled. One
/// read runs at a time per key (a file): callers that ask while it runs wait for its result, so
/// a file system that never answers holds one thread per file, not one per call.
final class CredentialFileReads<Value: Sendable>: Sendable {
    /// One read under way, and who waits for it; `nil` once it has ended.
    private final class Flight: Sendable {
        private let waiters: Locked<[Outcome<Value>]?>

        init(first: Outcome<Value>) {
            waiters = Locked([first])
        }

        /// A new waiter for the read's result; `nil` when the read has ended.
        func join() -> Outcome<Value>? {
            let outcome = Outcome<Value>()
            return waiters.withLock { waiters in
                guard waiters != nil else { return nil }
                waiters?.append(outcome)
                return outcome
            }
        }

        /// Gives `result` to every waiter, those that gave up included (it is dropped for them).
        func finish(_ result: Result<Value, AuthenticationStorageError>) {
            let waiting = waiters.withLock { waiters in
                defer { waiters = nil }
                return waiters ?? []
            }
            for outcome in waiting { outcome.settle(result.mapError { $0 }) }
        }
    }

    private let flights = Locked<[String: Flight]>([:])

    init() {}

    /// What `read` gives, run on a thread of its own unless a read for `key` is under way (then
    /// its result); ``APIError/Kind/timeout`` when `deadline` passes first, `CancellationError`
    /// when the calling task is cancelled first. `read` runs to its end either way: it should
    /// keep what it learnt itself (in a cache), as the caller may be gone.
    func value(
        for key: String,
        deadline: ContinuousClock.Instant?,
        _ read: @escaping @Sendable () -> Result<Value, AuthenticationStorageError>
    ) async throws -> Value {
        if let deadline, deadline <= .now { throw APIError.timedOut() }
        let (outcome, started): (Outcome<Value>, Flight?) = flights.withLock { flights in
            if let flight = flights[key], let outcome = flight.join() { return (outcome, nil) }
            let outcome = Outcome<Value>()
            let flight = Flight(first: outcome)
            flights[key] = flight
            return (outcome, flight)
        }
        if let started {
            // A thread of its own, not a Dispatch queue: on Linux the queues and the cooperative
            // pool share threads, so reads blocked on a mount that never answers would hold back
            // every task of the process.
            Thread.detachNewThread {
                let result = read()
                self.flights.withLock { flights in
                    if flights[key] === started { flights[key] = nil }
                }
                started.finish(result)
            }
        }
        return try await outcome.value(deadline: deadline)
    }
}

