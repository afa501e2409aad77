import Resourceful
import CLibSecret
import Dispatch
import Foundation
import Synchronization

/// Runs a blocking libsecret call on a thread of its own, bounded by a `GCancellable` that is
/// cancelled when the time limit passes or the calling task is cancelled.
///
/// The call runs on a new thread, not on a Dispatch queue: on Linux the cooperative pool and the
/// global queues draw on the same threads, so calls blocked on a slow Secret Service would hold
/// back every task and timer of the process.
enum KeyringCall {
    private static let queue = DispatchQueue(label: "resourceful.keyring", qos: .userInitiated, attributes: .concurrent)

    /// What a running call shares with its timer and cancellation handler.
    private final class Guard: Sendable {
        let cancellable: GObjectReference
        let timedOut = Atomic<Bool>(false)
        let finished = Atomic<Bool>(false)

        init() {
            cancellable = GObjectReference(taking: gpointer(g_cancellable_new()))
        }

        var pointer: UnsafeMutablePointer<GCancellable> {
            cancellable.pointer.assumingMemoryBound(to: GCancellable.self)
        }

        func cancel(timedOut: Bool) {
            if timedOut { self.timedOut.store(true, ordering: .releasing) }
            g_cancellable_cancel(pointer)
        }
    }

    /// Runs `body` with a cancellable; a cancelled GLib call becomes ``KeyringError/Kind/timedOut``
    /// or ``KeyringError/Kind/cancelled``.
    static func run<T: Sendable>(
        _ operation: String,
        timeout: Duration,
        _ body: @escaping @Sendable (UnsafeMutablePointer<GCancellable>) throws(KeyringError) -> T
    ) async throws(KeyringError) -> T {
        let guardian = Guard()
        let result: Result<T, KeyringError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                queue.asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: timeout.nanoseconds))) {
                    if !guardian.finished.load(ordering: .acquiring) { guardian.cancel(timedOut: true) }
                }
                Thread.detachNewThread {
                    let outcome: Result<T, KeyringError>
                    do throws(KeyringError) {
                        outcome = .success(try body(guardian.pointer))
                    } catch {
                        outcome = .failure(error)
                    }
                    guardian.finished.store(true, ordering: .releasing)
                    continuation.resume(returning: outcome)
                }
            }
        } onCancel: {
            guardian.cancel(timedOut: false)
        }
        switch result {
        case .success(let value):
            return value
        case .failure(let error) where error.kind == .cancelled && guardian.timedOut.load(ordering: .acquiring):
            throw KeyringError(.timedOut, operation: operation, message: "no answer within \(timeout)")
        case .failure(let error):
            throw error
        }
    }
}
