import Crypto
import Dispatch
import Foundation
import Logging
import Resourceful
import Synchronization

#if canImport(Glibc)
    // `struct stat`'s members are visible through the module that declares it first in this
    // target's module graph, which differs between a file-by-file build (Dispatch's C headers)
    // and a whole-module one (CoreFoundation's): both are imported, so that either compiles.
    import CDispatch
    import CoreFoundation
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension OAuth2AuthenticationStorage {
    /// What to do when another process holds the lock until the deadline.
    enum LockWait {
        /// Fail with ``OAuth2Error/Kind/unreachable``: a renewal.
        case fail
        /// Go on without it (`body` is told): a logout, which then says it cannot be sure.
        case proceed
    }

    /// Whether a body runs holding the lock, and if not, why.
    enum LockHold: Sendable {
        /// It holds the lock: what checks that it still does.
        case held(RefreshLock.Claim)
        /// It does not: why, said as "the lock … could not be …" to end a sentence.
        case notHeld(String)

        /// Whether the lock is held.
        var isHeld: Bool {
            if case .held = self { return true }
            return false
        }

        /// Whether the lock is held and its file is still the one other processes lock (not
        /// removed or replaced since it was taken), checked by `deadline`.
        func confirmed(until deadline: ContinuousClock.Instant) async -> Bool {
            guard case .held(let claim) = self else { return false }
            return await claim.confirmed(until: deadline)
        }
    }

    /// Runs `body` holding `service`'s ``RefreshLock``, waiting for another process (and for a
    /// file system that does not answer) at most until `deadline`; `body` is told whether it
    /// holds the lock. No usable lock folder (each absent and impossible to make, or unsafe on the
    /// way; logged at warning) means `body` runs without it; a lock folder another user made or
    /// holds, one open to others, or a lock file that cannot be opened in time or for a passing
    /// reason fails a renewal (`wait` `.fail`) with ``OAuth2Error/Kind/unreachable``.
    func withRefreshLock<T: Sendable>(
        for service: String,
        deadline: ContinuousClock.Instant,
        orElse wait: LockWait,
        _ body: (_ hold: LockHold) async throws(OAuth2Error) -> T
    ) async throws(OAuth2Error) -> T {
        switch await RefreshLock.acquire(service: service, deadline: deadline, opener: lockOpener) {
        case .held(let lock):
            let result: Result<T, OAuth2Error>
            do throws(OAuth2Error) {
                result = .success(try await body(.held(lock.claim)))
            } catch {
                result = .failure(error)
            }
            _ = consume lock
            return try result.get()
        case .unavailable(let reason):
            logger.warning(
                "OAuth 2 refresh tokens are used without a lock shared with other processes",
                metadata: ["service": "\(service)", "reason": "\(reason)"]
            )
            return try await body(.notHeld("no folder for the lock other processes renew it under could be used (\(reason))"))
        case .failed(let reason):
            guard wait == .proceed else {
                throw OAuth2Error(
                    .unreachable, "the lock other processes renew the token of '\(service)' under could not be taken: \(reason)")
            }
            return try await body(.notHeld("the lock other processes renew it under could not be taken (\(reason))"))
        case .timedOut(opening: true):
            guard wait == .proceed else {
                throw OAuth2Error(
                    .unreachable,
                    "the lock file other processes renew the token of '\(service)' under could not be opened before the deadline"
                )
            }
            return try await body(.notHeld("the lock file other processes renew it under could not be opened in time"))
        case .timedOut(opening: false):
            guard wait == .proceed else {
                throw OAuth2Error(.unreachable, "another process was renewing the token of '\(service)' until the deadline")
            }
            return try await body(.notHeld("the lock other processes renew it under could not be had in time"))
        case .cancelled:
            throw OAuth2Error(.unreachable, "'\(service)': cancelled while waiting for another process's token renewal")
        }
    }
}
