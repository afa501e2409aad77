public import Foundation

/// The endpoints of an authorization server, from the settings or its metadata.
///
/// Endpoints read from the issuer's metadata (RFC 8414, OpenID Connect discovery) are trusted
/// only as far as the issuer: under an `https` issuer every one must be `https` (plain `http`
/// only when the issuer itself is `http` on a loopback IP address), and the token, device
/// authorization and revocation endpoints, which receive the client's credentials, refresh
/// tokens and device codes, must be on the issuer's host and port. Metadata that breaks this is
/// refused (``OAuth2Error/Kind/invalidResponse``, naming the metadata key) before anything is
/// sent. An endpoint the settings name is the user's choice and is used as written: a server
/// whose endpoints are on another host (Google's token endpoint is on `oauth2.googleapis.com`
/// under the issuer `accounts.google.com`; Amazon Cognito's are on the user pool's domain) is
/// used by setting `tokenEndpoint` (and `deviceAuthorizationEndpoint`, `revocationEndpoint`
/// when used) in the configuration.
public struct OAuth2Endpoints: Sendable, Equatable {
    /// The token endpoint.
    public var token: URL
    /// The device authorization endpoint, if the server has one.
    public var deviceAuthorization: URL?
    /// The authorization endpoint, if the server has one.
    public var authorization: URL?
    /// The revocation endpoint, if the server has one.
    public var revocation: URL?
    /// Whether the server's metadata says it puts `iss` on its authorization responses
    /// (`authorization_response_iss_parameter_supported`, RFC 9207): a browser login's redirect
    /// must then carry the issuer, and one without it is refused.
    public var issuerInAuthorizationResponse: Bool = false

    /// Whether `url` may receive a client's secrets: `https`, or `http` to a loopback IP address
    /// (`127.0.0.0/8`, `::1`), with no user information or fragment. The name `localhost` is not
    /// taken for plain http: it is resolved like any name, and may not stay on the machine
    /// (RFC 8252 §8.3 asks for an IP literal); write `127.0.0.1`.
    public static func isAllowed(_ url: URL) -> Bool {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false), let host = components.host?.lowercased(),
            !host.isEmpty, components.user == nil, components.password == nil, components.fragment == nil
        else { return false }
        switch components.scheme?.lowercased() {
        case "https": return true
        case "http": return isLoopback(host)
        default: return false
        }
    }

    static func isLoopback(_ host: String) -> Bool {
        let host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "127" else { return false }
        for part in parts {
            guard part.utf8.count <= 3, part.utf8.allSatisfy({ (byte: UInt8) -> Bool in byte >= 0x30 && byte <= 0x39 }), UInt8(part) != nil else {
                return false
            }
        }
        return true
    }

    /// The addresses of an issuer's metadata, in the order tried: RFC 8414's
    /// (`/.well-known/oauth-authorization-server` before the issuer's path), then OpenID
    /// Connect's (`/.well-known/openid-configuration` after it).
    static func metadataURLs(issuer: URL) -> [URL] {
        guard var components = URLComponents(url: issuer, resolvingAgainstBaseURL: false) else { return [] }
        var path = components.path
        while path.hasSuffix("/") { path.removeLast() }
        components.query = nil
        var urls: [URL] = []
        components.path = "/.well-known/oauth-authorization-server" + path
        if let url = components.url { urls.append(url) }
        components.path = path + "/.well-known/openid-configuration"
        if let url = components.url { urls.append(url) }
        return urls
    }
}
