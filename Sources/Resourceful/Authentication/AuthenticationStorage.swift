/// Where an ``API`` gets the `Authorization` header for the service it calls.
///
/// The ``API`` asks for ``APIConfig/service`` before every request and sends the returned value
/// as the whole `Authorization` header (for example `Bearer abc…`); it sends none when the storage
/// returns `nil`. An error thrown here fails the call with ``APIError/Kind/authentication`` before
/// anything is sent.
///
/// A storage that knows how long its credentials are valid (an OAuth 2 access token, a
/// short-lived token from a vault) implements ``credential(for:)`` too, giving each one's
/// ``Credential/expiresAt``; every other storage gets a version that says nothing of expiry.
///
/// Implementations must never log or put the credential in an error's description.
public protocol AuthenticationStorage: Sendable {
    /// The whole value of the `Authorization` header for `service`, or `nil` when there is none.
    func authenticationHeader(for service: String) async throws -> String?

    /// The credential for `service` with its expiry when the storage knows it, or `nil` when
    /// there is none. The default is ``authenticationHeader(for:)``'s answer without an expiry.
    func credential(for service: String) async throws -> Credential?
}
