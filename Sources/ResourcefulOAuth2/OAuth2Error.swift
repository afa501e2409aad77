public import Resourceful

/// Why an OAuth 2 credential could not be had. Its description names the endpoint, the grant and
/// the server's error code, never a secret, token or code; an ``API`` call that meets one fails with
/// `APIError.Kind.authentication` showing that description.
public struct OAuth2Error: SecretFreeDescription, Sendable, Equatable {
    /// The kind of failure.
    public enum Kind: String, Sendable, Equatable {
        /// The settings cannot work: a token endpoint that is not `https` on another host, no
        /// client secret where the client authentication needs one, a missing endpoint.
        case configuration
        /// The authorization server could not be reached, or did not answer in time; or a
        /// storage of the client's secrets or a person's tokens failed (its error is
        /// ``OAuth2Error/underlying``).
        case unreachable
        /// The server answered with an OAuth 2 error (``serverError``), such as `invalid_client`.
        case refused
        /// The answer is not a usable token response: too large, not JSON, no `access_token`, a
        /// `token_type` other than `Bearer`, an `expires_in` that is not a sane number; or the
        /// server's metadata names an endpoint that would take a credential to another host or
        /// over plain `http`; or an address for a person is not in the form
        /// ``VerificationAddress`` requires.
        case invalidResponse
        /// A person must log in (again): no refresh token is stored, or the server refused it
        /// (`invalid_grant`), or a device login was denied or expired.
        case loginRequired
    }

    /// The kind of failure.
    public let kind: Kind
    /// The server's `error` code, such as `invalid_grant`, when it sent one that RFC 6749, RFC 7009
    /// or RFC 8628 defines. Any other code is free text a hostile server chose, and is left out:
    /// the description then says "another error code".
    public let serverError: String?
    /// What happened, free of secrets, in our words: never a server's `error_description`.
    public let detail: String
    /// The error of a storage this one comes from (an app's own refresh-token store, say), as
    /// it threw it; not part of the description, nor of equality.
    public let underlying: (any Error)?

    /// The status the server answered with, when this is its refusal.
    let status: Int?

    init(_ kind: Kind, _ detail: String, serverError: String? = nil, underlying: (any Error)? = nil, status: Int? = nil) {
        self.kind = kind
        self.underlying = underlying
        self.status = status
        // Every server code comes through here, wherever it was read (a token answer, a
        // redirect's query): only a registered one is kept, and so shown.
        let code = serverError.flatMap { ErrorResponse(error: $0).code }
        self.serverError = code
        self.detail = serverError != nil && code == nil ? detail + " (another error code)" : detail
    }

    /// Whether the two say the same: kind, server code and detail.
    public static func == (lhs: OAuth2Error, rhs: OAuth2Error) -> Bool {
        lhs.kind == rhs.kind && lhs.serverError == rhs.serverError && lhs.detail == rhs.detail
    }

    /// `OAuth 2: <detail>`, with the server's error code.
    public var description: String {
        "OAuth 2: " + detail + (serverError.map { " (\($0))" } ?? "")
    }
}
