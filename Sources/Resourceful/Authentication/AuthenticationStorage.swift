/// Where an ``API`` gets the `Authorization` header for the service it calls.
///
/// The ``API`` asks for ``APIConfig/service`` before every request and sends the returned value
/// as the whole `Authorization` header (for example `Bearer abc…`); it sends none when the storage
/// returns `nil`. An error thrown here fails the call with ``APIError/Kind/authentication`` before
/// anything is sent.
///
/// Implementations must never log or put the credential in an error's description.
public protocol AuthenticationStorage: Sendable {
    /// The whole value of the `Authorization` header for `service`, or `nil` when there is none.
    func authenticationHeader(for service: String) async throws -> String?
}
