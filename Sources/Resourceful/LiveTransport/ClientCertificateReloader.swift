import Foundation
import Logging
import NIOSSL

#if canImport(Glibc)
import CDispatch
import CoreFoundation
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Follows a client certificate and key on disk, as cert-manager and Vault rotate them: when either
/// file is replaced (by rename, or by Kubernetes' `..data` symlink swap) or rewritten, the next
/// request carries a TLS configuration with the new pair, so new connections present it while the
/// ones already open finish with the old. A pair that cannot be used keeps the old one in use and
/// is logged once, at `warning`.
///
/// The files are looked at (`stat`, and read when they changed) on a thread of their own, at most
/// once per interval and one look at a time, never under the lock requests take nor on the
/// cooperative pool: a request waits for a look under way no longer than ``maximumWait`` from its
/// start (nor past its deadline), then goes on with the pair in use, so that a file system that
/// does not answer (a hung network mount) holds one thread, not the requests.
final class ClientCertificateReloader: Sendable {
    private struct State {
        var configuration: TLSConfiguration
        var identities: [CredentialFile.Identity?]
        var lastCheck: ContinuousClock.Instant
        /// The identities of a pair found broken and logged, so that it is logged once.
        var refused: [CredentialFile.Identity?]?
        /// The look under way, if any.
        var check: Check?
    }

    /// One look at the files under way on its own thread, and the requests waiting for it.
    private final class Check: Sendable {
        let started: ContinuousClock.Instant
        /// Who waits for the configuration it finds; `nil` once it ended.
        let waiters: Locked<[Outcome<TLSConfiguration>]?> = Locked([])

        init(started: ContinuousClock.Instant) {
            self.started = started
        }

        /// A new waiter; `nil` when the look has ended.
        func join() -> Outcome<TLSConfiguration>? {
            let outcome = Outcome<TLSConfiguration>()
            return waiters.withLock { waiters in
                guard waiters != nil else { return nil }
                waiters?.append(outcome)
                return outcome
            }
        }

        func finish(_ configuration: TLSConfiguration) {
            let waiting = waiters.withLock { waiters in
                defer { waiters = nil }
                return waiters ?? []
            }
            for outcome in waiting { outcome.settle(.success(configuration)) }
        }
    }

    /// How the files are identified: `stat` of each (following links), `nil` for a missing one.
    /// Tests put a call that blocks in its place.
    typealias Identify = @Sendable (_ tls: APIConfig.TLSSettings) -> [CredentialFile.Identity?]

    private let settings: APIConfig.HTTPSettings
    private let environment: [String: String]
    private let interval: Duration
    /// The longest a request waits for a look at the files under way, from the look's start.
    let maximumWait: Duration
    private let logger: Logger
    private let identify: Identify
    private let state: Locked<State>

    /// Follows the pair `settings.tls` names, starting from `configuration` (made from it), checking
    /// the files at most once per `interval`; a request waits at most `maximumWait` for a check,
    /// and so does this `init` for its first look at the files (on a thread of its own: a file
    /// system that does not answer leaves them unknown, to be read again by the first look that
    /// gets an answer).
    init(
        settings: APIConfig.HTTPSettings,
        environment: [String: String],
        configuration: TLSConfiguration,
        interval: Duration,
        maximumWait: Duration = .seconds(2),
        logger: Logger,
        identify: @escaping Identify = ClientCertificateReloader.identities(of:)
    ) {
        self.settings = settings
        self.environment = environment
        self.interval = interval
        self.maximumWait = maximumWait
        self.logger = logger
        self.identify = identify
        // The pair was just read from these files: what they are now is what it was made from.
        // Looked at on a thread of its own, for `maximumWait` at most (this is a synchronous
        // `init`): on a file system that stopped answering, the files count as unknown, and the
        // first look that gets an answer reads the pair again.
        let identities = Locked<[CredentialFile.Identity?]?>(nil)
        let looked = DispatchSemaphore(value: 0)
        let tls = settings.tls
        Thread.detachNewThread {
            let found = identify(tls)
            identities.withLock { $0 = found }
            looked.signal()
        }
        let wait = Int(OffPoolWork.nanoseconds(maximumWait))
        let known = looked.wait(timeout: .now() + .nanoseconds(wait)) == .success ? identities.value : nil
        state = Locked(State(configuration: configuration, identities: known ?? [nil, nil], lastCheck: .now))
    }

    /// The configuration for the next request: the newest pair that could be read. Waits for a
    /// look at the files under way (or starts one when the interval has passed) until it ends,
    /// `deadline` passes, the task is cancelled, or ``maximumWait`` has passed since the look
    /// began; then the pair in use.
    func configuration(deadline: ContinuousClock.Instant? = nil) async -> TLSConfiguration {
        let now = ContinuousClock.now
        let (current, check, started): (TLSConfiguration, Check?, Check?) = state.withLock { state in
            if let check = state.check { return (state.configuration, check, nil) }
            guard state.lastCheck.duration(to: now) >= interval else { return (state.configuration, nil, nil) }
            state.lastCheck = now
            let check = Check(started: now)
            state.check = check
            return (state.configuration, check, check)
        }
        guard let check else { return current }
        if let started {
            // A thread of its own, not a Dispatch queue: on Linux the queues and the cooperative
            // pool share threads, so a look blocked on a mount that never answers would hold back
            // every task of the process.
            Thread.detachNewThread { self.look(started) }
        }
        let giveUp = check.started + maximumWait
        guard giveUp > .now, let outcome = check.join() else {
            return state.withLock { $0.configuration }
        }
        let bound = deadline.map { Swift.min($0, giveUp) } ?? giveUp
        return (try? await outcome.value(deadline: bound)) ?? state.withLock { $0.configuration }
    }

    /// Looks at the files (on the calling thread, which may block), takes a changed pair that can
    /// be used, and ends `check`.
    private func look(_ check: Check) {
        let identities = identify(settings.tls)
        let changed: Bool = state.withLock { state in
            identities != state.identities && identities != state.refused
        }
        var outcome: TLSConfiguration?
        if changed {
            do throws(TransportError) {
                // Read here, on the look's own thread, however long the file system takes: a
                // time-out would be taken for a broken pair, and the pair never read again.
                if let fresh = try TLSTrust.readConfiguration(for: settings, environment: environment) {
                    outcome = fresh
                    state.withLock { state in
                        state.configuration = fresh
                        state.identities = identities
                        state.refused = nil
                    }
                }
            } catch {
                let isNew = state.withLock { state in
                    defer { state.refused = identities }
                    return state.refused != identities
                }
                if isNew {
                    logger.warning(
                        "the client certificate or key changed on disk but cannot be used; the previous pair stays in use",
                        metadata: ["detail": "\(error.detail ?? "")"]
                    )
                }
            }
        }
        let configuration = state.withLock { state in
            if state.check === check { state.check = nil }
            return outcome ?? state.configuration
        }
        check.finish(configuration)
    }

    /// What identifies the certificate and key files now; `nil` for a file that is missing.
    static func identities(of tls: APIConfig.TLSSettings) -> [CredentialFile.Identity?] {
        [tls.clientCertificateFile, tls.clientKeyFile].map { path in
            var status = stat()
            guard let path, stat(path, &status) == 0 else { return nil }
            return CredentialFile.Identity(status)
        }
    }
}
