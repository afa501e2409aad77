import Logging
import NIOSSL

#if canImport(Glibc)
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
final class ClientCertificateReloader: Sendable {
    private struct State {
        var configuration: TLSConfiguration
        var identities: [CredentialFile.Identity?]
        var lastCheck: ContinuousClock.Instant
        /// The identities of a pair found broken and logged, so that it is logged once.
        var refused: [CredentialFile.Identity?]?
    }

    private let settings: APIConfig.HTTPSettings
    private let environment: [String: String]
    private let interval: Duration
    private let logger: Logger
    private let state: Locked<State>

    /// Follows the pair `settings.tls` names, starting from `configuration` (made from it), checking
    /// the files at most once per `interval`.
    init(
        settings: APIConfig.HTTPSettings,
        environment: [String: String],
        configuration: TLSConfiguration,
        interval: Duration,
        logger: Logger
    ) {
        self.settings = settings
        self.environment = environment
        self.interval = interval
        self.logger = logger
        state = Locked(State(configuration: configuration, identities: Self.identities(of: settings.tls), lastCheck: .now))
    }

    /// The configuration for the next request: the newest pair that could be read.
    func configuration() -> TLSConfiguration {
        let now = ContinuousClock.now
        let (configuration, changed) = state.withLock { state -> (TLSConfiguration, [CredentialFile.Identity?]?) in
            guard state.lastCheck.duration(to: now) >= interval else { return (state.configuration, nil) }
            state.lastCheck = now
            let identities = Self.identities(of: settings.tls)
            guard identities != state.identities, identities != state.refused else { return (state.configuration, nil) }
            return (state.configuration, identities)
        }
        guard let changed else { return configuration }
        // Read outside the lock; a request racing this one may read the files as well.
        do throws(APIError) {
            guard let fresh = try TLSTrust.configuration(for: settings, environment: environment) else { return configuration }
            return state.withLock { state in
                state.configuration = fresh
                state.identities = changed
                state.refused = nil
                return fresh
            }
        } catch {
            // Two requests may have found the same broken pair at once: one of them logs it.
            let isNew = state.withLock { state in
                defer { state.refused = changed }
                return state.refused != changed
            }
            if isNew {
                logger.warning(
                    "the client certificate or key changed on disk but cannot be used; the previous pair stays in use",
                    metadata: ["detail": "\(error.detail ?? "")"]
                )
            }
            return configuration
        }
    }

    /// What identifies the certificate and key files now; `nil` for a file that is missing.
    private static func identities(of tls: APIConfig.TLSSettings) -> [CredentialFile.Identity?] {
        [tls.clientCertificateFile, tls.clientKeyFile].map { path in
            var status = stat()
            guard let path, stat(path, &status) == 0 else { return nil }
            return CredentialFile.Identity(status)
        }
    }
}
