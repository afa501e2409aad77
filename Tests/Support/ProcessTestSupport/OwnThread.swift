import Foundation

/// Runs `work` on a thread of its own and waits for it without holding a thread of the
/// cooperative pool: for blocking calls and long computations in tests.
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Swift.Result { try work() })
        }
    }
}
