import AsyncHTTPClient
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Tries a connection again while the server refuses it, as during a restart: a refused
/// connection sent nothing, so trying again is safe for every method, `POST` included. So is a
/// connection reset or closed before the request's head was written to it, or one the server did
/// not answer within `http.connectTimeout`.
///
/// Waits start at 25 ms and double up to 250 ms, each drawn at random between half and all of
/// it, and stop at the budget (`http.connectRetryBudget`) or the request's deadline, whichever is
/// first. A connection that was reset or closed after the request was written may have carried
/// it, and is left to the retry policy.
struct ConnectRetry: Sendable {
    /// How long a request may keep trying to connect.
    let budget: Duration

    static let firstWait = Duration.milliseconds(25)
    static let longestWait = Duration.milliseconds(250)

    /// Runs `attempt` until it does not fail with ``NotSent``, the budget is spent or `deadline`
    /// would pass; then throws ``ConnectionNotMade`` naming the target.
    func run<T>(
        target: @autoclosure () -> String,
        deadline: ContinuousClock.Instant,
        _ attempt: () async throws -> T
    ) async throws(TransportError) -> T {
        let start = ContinuousClock.now
        let end = min(deadline, start + budget)
        var wait = Self.firstWait
        var attempts = 0
        while true {
            do {
                return try await attempt()
            } catch let failure as NotSent {
                attempts += 1
                let pause = Self.jittered(wait)
                guard ContinuousClock.now + pause < end else {
                    throw TransportError(
                        .connectionFailed,
                        underlying: ConnectionNotMade(target: target(), attempts: attempts, reason: failure.reason, cause: failure.cause)
                    )
                }
                do {
                    try await Task.sleep(for: pause)
                } catch {
                    throw TransportError.cancelled
                }
                wait = min(wait * 2, Self.longestWait)
            } catch {
                throw TransportError.unclassified(error)
            }
        }
    }

    /// A wait between half and all of `wait`.
    static func jittered(_ wait: Duration) -> Duration {
        let nanoseconds = wait.nanoseconds
        return .nanoseconds(Int64.random(in: (nanoseconds / 2)...max(nanoseconds, 1)))
    }

    /// An attempt that failed before any of the request was sent: `cause` is what the client
    /// threw.
    struct NotSent: Error {
        enum Reason: Sendable {
            /// The server refused the connection.
            case refused
            /// The connection was reset or closed before the request's head was written.
            case closed
            /// The server did not answer within `http.connectTimeout`.
            case connectTimedOut
        }

        let reason: Reason
        let cause: any Error
    }

    /// Why `error` says the connection failed before any of the request was written, if it says so
    /// whatever was written: a refusal or a connect time-out (a reset or a close needs to know
    /// whether the request's head was written).
    static func unsentReason(_ error: any Error) -> NotSent.Reason? {
        if isRefused(error) { return .refused }
        if let error = error as? HTTPClientError, error == .connectTimeout { return .connectTimedOut }
        return nil
    }

    /// Whether `error` says the server refused the connection: nothing was sent.
    static func isRefused(_ error: any Error) -> Bool {
        switch error {
        case let error as IOError:
            return error.errnoCode == ECONNREFUSED
        case let error as NIOConnectionError:
            let failures = error.connectionErrors
            return !failures.isEmpty && failures.allSatisfy { isRefused($0.error) }
        default:
            return false
        }
    }
}

/// The server refused (or reset before the request was written, or did not answer) every
/// connection a request tried within its connect-retry budget.
struct ConnectionNotMade: FinalTransportFailure, CustomStringConvertible {
    /// `host:port`, as the request named it.
    let target: String
    let attempts: Int
    /// What happened to the last connection tried.
    let reason: ConnectRetry.NotSent.Reason
    let cause: any Error

    /// Refusals and resets were tried again until the budget was spent, so the retry policy
    /// does not try again; a connect time-out may have spent the budget in one attempt, and is
    /// left to the policy, as any connection failure.
    var isFinal: Bool { reason != .connectTimedOut }

    var description: String {
        let what =
            switch reason {
            case .refused: "was refused"
            case .closed: "was closed before the request was sent"
            case .connectTimedOut: "was not answered within http.connectTimeout"
            }
        return "the connection to \(target) \(what) (\(attempts) attempt\(attempts == 1 ? "" : "s") within http.connectRetryBudget)"
    }
}
