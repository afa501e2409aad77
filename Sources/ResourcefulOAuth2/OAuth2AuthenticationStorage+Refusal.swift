extension OAuth2AuthenticationStorage {
    /// A token request the server refused, not asked again until ``until``
    /// (``OAuth2Settings/refusalBackoff``).
    struct Refusal: Sendable {
        /// The longest back-off kept, whatever the settings say: a day.
        static let longest = Duration.seconds(86_400)

        /// What the server's answer was made into.
        let refused: OAuth2Error
        /// When the server may be asked again.
        let until: ContinuousClock.Instant
        /// The epoch it was refused in: a logout or ``OAuth2AuthenticationStorage/invalidate()`` ends it.
        let epoch: UInt64

        /// The back-off `error` of a request for `grant` earns, ended at `now` (`backoff`, at most
        /// ``longest``): `nil` when the back-off is off (zero or less), or when asking again may go
        /// otherwise at once: the server could not be reached or failed (a `5xx`, `server_error`,
        /// `temporarily_unavailable`), a storage failed, the settings cannot work, or a person must
        /// log in with the `refresh_token` grant (another process's login may store a new refresh
        /// token at any moment: each call reads it again).
        init?(_ error: any Error, at now: ContinuousClock.Instant, backoff: Duration, grant: OAuth2Settings.Grant, epoch: UInt64) {
            guard backoff > .zero, let error = error as? OAuth2Error else { return nil }
            switch error.kind {
            case .refused, .invalidResponse: break
            // A client's own grant refused (`access_denied`, `invalid_grant`): no login changes it.
            case .loginRequired where grant == .clientCredentials && error.serverError != nil: break
            default: return nil
            }
            if let status = error.status, status >= 500 { return nil }
            if let code = error.serverError, ["server_error", "temporarily_unavailable"].contains(code) { return nil }
            refused = error
            until = now + Swift.min(backoff, Self.longest)
            self.epoch = epoch
        }

        /// The error a call meets at `now` while the server is not asked: the refusal's kind and
        /// code, saying when it will be asked again.
        func error(at now: ContinuousClock.Instant) -> OAuth2Error {
            // At most a day left (``longest``): whole seconds, rounded up.
            let left = Swift.min(Swift.max(until - now, .zero), Self.longest).components
            let seconds = left.seconds + (left.attoseconds > 0 ? 1 : 0)
            let when = seconds <= 1 ? "within a second" : "in \(seconds) s"
            return OAuth2Error(
                refused.kind, refused.detail + "; the server is asked again \(when) (authentication.oauth2.refusalBackoff)",
                serverError: refused.serverError, underlying: refused.underlying, status: refused.status)
        }
    }
}
