extension OAuth2AuthenticationStorage {
    /// A token request the server refused, not asked again until ``until``
    /// (``OAuth2Settings/refusalBackoff``).
    struct Refusal: Sendable {
        /// What the server's answer was made into.
        let refused: OAuth2Error
        /// When the server may be asked again.
        let until: ContinuousClock.Instant
        /// The epoch it was refused in: a logout or ``OAuth2AuthenticationStorage/invalidate()`` ends it.
        let epoch: UInt64

        /// The back-off `error` earns, ended at `now`: `nil` when the back-off is off, or when
        /// asking again may go otherwise at once: the server could not be reached, a storage
        /// failed, the settings cannot work, or a person must log in (another process's login
        /// may store a new refresh token at any moment: each call reads it again).
        init?(_ error: any Error, at now: ContinuousClock.Instant, backoff: Duration, epoch: UInt64) {
            guard backoff > .zero, let error = error as? OAuth2Error else { return nil }
            switch error.kind {
            case .refused, .invalidResponse: break
            default: return nil
            }
            refused = error
            until = now + backoff
            self.epoch = epoch
        }

        /// The error a call meets at `now` while the server is not asked: the refusal's kind and
        /// code, saying when it will be asked again.
        func error(at now: ContinuousClock.Instant) -> OAuth2Error {
            let left = Double((until - now).components.seconds) + Double((until - now).components.attoseconds) / 1e18
            let seconds = left < 1 ? "under a second" : "\(Int(left.rounded(.up))) s"
            return OAuth2Error(
                refused.kind, refused.detail + "; the server is asked again in \(seconds) (refusalBackoff)",
                serverError: refused.serverError, underlying: refused.underlying, status: refused.status)
        }
    }
}
