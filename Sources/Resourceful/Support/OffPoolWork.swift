import Foundation
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// Blocking work (a file system that may not answer: a hung network mount) run on threads of its
/// own, never on the cooperative pool nor on NIO's shared thread pool, and waited for at most
/// until a deadline: a file system that does not answer holds those threads, not the caller nor
/// anyone else's file work.
///
/// ``run(until:cancellable:notRun:abandon:_:)`` gives each piece of work a new thread: not a
/// Dispatch queue, whose worker threads on Linux are those the cooperative pool and other queues
/// share (work blocked there starves them), and not a fixed pool, which work that never returns
/// would fill. A ``Worker`` is one thread for a sequence of pieces (a download's writes), made
/// once rather than once a piece.
package enum OffPoolWork {

    /// What became of the work.
    package enum Outcome<T: Sendable>: Sendable {
        /// It finished in time with this.
        case done(T)
        /// The deadline passed first (what it gives later goes to `abandon`).
        case timedOut
        /// The waiting task was cancelled first.
        case cancelled
    }

    /// Runs `body` on a thread of its own, waiting for it at most until `deadline` and (when
    /// `cancellable`) until the waiting task is cancelled; what it returns after the wait ended
    /// goes to `abandon` (to close what it opened). When the deadline has passed or the task is
    /// cancelled before it starts, `body` never runs and `notRun` is called instead (to let go
    /// of what `body` would have used).
    package static func run<T: Sendable>(
        until deadline: ContinuousClock.Instant,
        cancellable: Bool = true,
        notRun: @Sendable () -> Void = {},
        abandon: @escaping @Sendable (T) -> Void,
        _ body: @escaping @Sendable () -> T
    ) async -> Outcome<T> {
        await wait(until: deadline, cancellable: cancellable, notRun: notRun, abandon: abandon, body) { job in
            Thread.detachNewThread {
                nameThisThread()
                job()
            }
        }
    }

    /// The name of the threads work runs on (as `ps -L` and a debugger show it): a thread of the
    /// package that waits on a file system.
    package static let threadName = "resourceful-io"

    /// Names the calling thread ``threadName``. Set through the system, not `Thread.current.name`:
    /// Foundation knows a new thread only once its creator has stored it, which the thread may
    /// run before, and the name is then not set (the thread keeps its creator's).
    static func nameThisThread() {
        #if canImport(Glibc)
        // The calling thread's own name file (Linux 3.17 and later), in memory, never a disk's.
        let file = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        if file >= 0 {
            defer { close(file) }
            let written = threadName.utf8CString.withUnsafeBufferPointer { write(file, $0.baseAddress, $0.count - 1) }
            if written == threadName.utf8.count { return }
        }
        #endif
        Thread.current.name = threadName
    }

    /// Waits for `body`, started by `start`, as ``run(until:cancellable:notRun:abandon:_:)`` says.
    fileprivate static func wait<T: Sendable>(
        until deadline: ContinuousClock.Instant,
        cancellable: Bool,
        notRun: @Sendable () -> Void,
        abandon: @escaping @Sendable (T) -> Void,
        _ body: @escaping @Sendable () -> T,
        start: (@escaping @Sendable () -> Void) -> Void
    ) async -> Outcome<T> {
        let left = deadline - ContinuousClock.now
        guard left > .zero else {
            notRun()
            return .timedOut
        }
        if cancellable, Task.isCancelled {
            notRun()
            return .cancelled
        }
        let race = Race<T>()
        let timer = MultiThreadedEventLoopGroup.singleton.any().scheduleTask(in: .nanoseconds(nanoseconds(left))) {
            _ = race.settle(.timedOut)
        }
        defer { timer.cancel() }
        start {
            let value = body()
            if !race.settle(.done(value)) { abandon(value) }
        }
        if !cancellable {
            return await withCheckedContinuation { race.install($0) }
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { race.install($0) }
        } onCancel: {
            _ = race.settle(.cancelled)
        }
    }

    /// `duration` in whole nanoseconds, between 0 and `Int64.max`.
    package static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        guard seconds < Int64.max / 1_000_000_000 - 1 else { return Int64.max }
        return max(seconds * 1_000_000_000 + attoseconds / 1_000_000_000, 0)
    }

    /// The one answer a wait gets, from the work, the timer or a cancellation, whichever is first.
    private final class Race<T: Sendable>: Sendable {
        struct State {
            var continuation: CheckedContinuation<Outcome<T>, Never>?
            var early: Outcome<T>?
            var settled = false
        }
        let state = Locked(State())

        /// Gives `outcome` to the waiter unless something was first; whether it was given.
        func settle(_ outcome: Outcome<T>) -> Bool {
            let waiting: CheckedContinuation<Outcome<T>, Never>?? = state.withLock { state in
                guard !state.settled else { return .none }
                state.settled = true
                if let continuation = state.continuation {
                    state.continuation = nil
                    return .some(continuation)
                }
                state.early = outcome
                return .some(nil)
            }
            guard case .some(let continuation) = waiting else { return false }
            continuation?.resume(returning: outcome)
            return true
        }

        /// Waits with `continuation`, or answers it at once with what came first.
        func install(_ continuation: CheckedContinuation<Outcome<T>, Never>) {
            let early: Outcome<T>? = state.withLock { state in
                if let early = state.early { return early }
                state.continuation = continuation
                return nil
            }
            if let early { continuation.resume(returning: early) }
        }
    }

    /// One thread of its own that runs the pieces of work given to it one at a time, in order:
    /// for a sequence of blocking pieces (a download's writes), which would otherwise each cost a
    /// new thread. The thread is made when work comes and ends when it has been idle for
    /// ``idleTime`` or after ``close()``; a piece that never returns holds it, and the pieces
    /// after it wait in line (their waits end at their deadlines all the same).
    package final class Worker: Sendable {
        private struct State {
            var jobs: [@Sendable () -> Void] = []
            var threadRuns = false
            var closed = false
        }

        private let state = Locked(State())
        private let wake = DispatchSemaphore(value: 0)

        /// How long the thread waits for more work before it ends.
        package static let idleTime: Duration = .seconds(5)

        /// A worker, without a thread until work comes.
        package init() {}

        /// Runs `body` on the worker's thread after the work given before it, waiting for it as
        /// ``OffPoolWork/run(until:cancellable:notRun:abandon:_:)`` does; `body` runs even when
        /// the wait ended before its turn came (its result then goes to `abandon`), unless the
        /// deadline had passed or the task was cancelled before it was given.
        package func run<T: Sendable>(
            until deadline: ContinuousClock.Instant,
            cancellable: Bool = true,
            notRun: @Sendable () -> Void = {},
            abandon: @escaping @Sendable (T) -> Void,
            _ body: @escaping @Sendable () -> T
        ) async -> Outcome<T> {
            await OffPoolWork.wait(until: deadline, cancellable: cancellable, notRun: notRun, abandon: abandon, body) { job in
                submit(job)
            }
        }

        /// Gives `job` to the thread, without waiting for it.
        package func submit(_ job: @escaping @Sendable () -> Void) {
            let starts = state.withLock { state -> Bool in
                state.jobs.append(job)
                guard !state.threadRuns else { return false }
                state.threadRuns = true
                return true
            }
            if starts {
                // The thread holds the worker until it ends (idle, or closed and done).
                Thread.detachNewThread {
                    OffPoolWork.nameThisThread()
                    self.serve()
                }
            }
            wake.signal()
        }

        /// Lets the thread end once the work given is done (it starts again if more comes).
        package func close() {
            state.withLock { $0.closed = true }
            wake.signal()
        }

        /// The thread's loop: each piece in turn, until none is left and the worker is closed or
        /// has been idle for ``idleTime``.
        private func serve() {
            var idle = false
            while true {
                // Nil when the thread stops: decided under the lock, so that a piece given after
                // it starts a thread of its own.
                let next: (@Sendable () -> Void)?? = state.withLock { state in
                    if !state.jobs.isEmpty { return .some(state.jobs.removeFirst()) }
                    guard state.closed || idle else { return .some(nil) }
                    state.threadRuns = false
                    state.closed = false
                    return .none
                }
                switch next {
                case .none:
                    return
                case .some(let job?):
                    idle = false
                    job()
                case .some(nil):
                    idle = wake.wait(timeout: .now() + .nanoseconds(Int(OffPoolWork.nanoseconds(Worker.idleTime)))) == .timedOut
                }
            }
        }
    }
}
