public import Foundation
public import Resourceful

/// An API's OAuth 2 client: where its authorization server is, who the client is, how it proves
/// it, and which grant gets its tokens. Read from the `authentication.oauth2` keys (listed in the
/// configuration guide of `Resourceful`'s documentation), or made in code.
///
/// A service under `services.<name>` that sets its own `clientId` (other than the top level's),
/// any endpoint (`issuer`, `tokenEndpoint`, `deviceAuthorizationEndpoint`,
/// `authorizationEndpoint`, `revocationEndpoint`), or a `baseURL` on another origin than the top
/// level's talks to another server: it must set its own
/// `service` (the key its login and refresh token are kept under), other than the top level's;
/// it inherits the top level's client ID (not a secret) but no client secret or private key, and
/// must name its own (`clientSecret.name`, `privateKey.name`, `privateKeyFile`); settings that
/// would send the top level's are refused.
/// An environment variable that sets an endpoint to another value than the configuration file's
/// (`RESOURCEFUL_AUTHENTICATION_OAUTH2_TOKEN_ENDPOINT`, a service's
/// `RESOURCEFUL_SERVICES_<NAME>_AUTHENTICATION_OAUTH2_…`) is refused, naming it: the file's client
/// secret, private key and refresh tokens would follow it. Set the endpoint in the file instead.
/// Plain `http` endpoints are taken only on a loopback IP address (`127.0.0.1`, `[::1]`), not
/// `localhost` (RFC 8252 §8.3).
public struct OAuth2Settings: Sendable, Equatable {
    /// How tokens are obtained without a person.
    public enum Grant: String, Sendable, Equatable, CaseIterable {
        /// The client's own credentials (RFC 6749 §4.4): a service calling as itself.
        case clientCredentials = "client_credentials"
        /// A refresh token a person's login left in a writable secret storage, such as the keyring
        /// (`resourceful login`).
        case refreshToken = "refresh_token"
    }

    /// How the client proves who it is to the token endpoint.
    public enum ClientAuthentication: String, Sendable, Equatable, CaseIterable {
        /// HTTP Basic with the client ID and secret (RFC 6749 §2.3.1).
        case clientSecretBasic = "client_secret_basic"
        /// The client ID and secret in the form body.
        case clientSecretPost = "client_secret_post"
        /// A JWT signed with the client's private key (RFC 7523 §2.2).
        case privateKeyJWT = "private_key_jwt"
        /// The client ID alone: a public client, such as a command-line tool.
        case none
    }

    /// The authorization server's issuer: its endpoints are found through its metadata
    /// (RFC 8414, or OpenID Connect discovery) unless set below.
    public var issuer: URL?
    /// The token endpoint.
    public var tokenEndpoint: URL?
    /// The device authorization endpoint (RFC 8628), for logins at a terminal.
    public var deviceAuthorizationEndpoint: URL?
    /// The authorization endpoint, for logins through a browser.
    public var authorizationEndpoint: URL?
    /// The revocation endpoint (RFC 7009), asked on logout.
    public var revocationEndpoint: URL?
    /// The client ID.
    public var clientID: String
    /// How the client authenticates.
    public var clientAuthentication: ClientAuthentication
    /// The storage kind the client secret is kept in (`file`, `environment`, `keyring`).
    public var clientSecretStorage: APIConfig.StorageKind?
    /// The client secret's name in that storage.
    public var clientSecretName: String?
    /// The PEM file of the private key that signs client assertions (RSA or P-256).
    public var privateKeyFile: String?
    /// The storage kind the PEM private key is kept in instead of a file (`file`, `environment`,
    /// `keyring`).
    public var privateKeyStorage: APIConfig.StorageKind?
    /// The private key's name in that storage.
    public var privateKeyName: String?
    /// The key ID (`kid`) put in the assertion's header.
    public var keyID: String?
    /// The grant used without a person.
    public var grant: Grant
    /// The scopes asked for.
    public var scopes: [String]
    /// The `audience` parameter some servers want (Auth0).
    public var audience: String?
    /// The `resource` indicator (RFC 8707).
    public var resource: String?
    /// How long before its expiry a token is renewed.
    public var skew: Duration
    /// How long a token request the server refused is not asked again: calls for the same service
    /// in that time fail at once with the refusal's kind and code (its description says when the
    /// server is asked again), so that a refused client or grant costs the server one request per
    /// interval and service, not one per call.
    ///
    /// A refusal is a token endpoint's `4xx` (`429` included), a `200` that is not a usable token,
    /// or server metadata that cannot be used; not a server failing (a `5xx`, `server_error`,
    /// `temporarily_unavailable`) or not reached, nor a person's refresh token refused
    /// (`invalid_grant` with the `refresh_token` grant: a login in another process may store a new
    /// one at any moment, and each call reads it again). A login through this storage,
    /// ``OAuth2AuthenticationStorage/invalidate()`` or a logout ends it; a fix made in another
    /// process (a client secret replaced in its storage) is seen once it has passed. With a
    /// fleet's shared tokens, a token another instance got meanwhile is still read and used. Zero
    /// or less turns it off; it lasts at most a day (5 seconds by default).
    public var refusalBackoff: Duration
    /// The storage kind a person's refresh token is kept in.
    public var refreshTokenStorage: APIConfig.StorageKind

    /// Creates settings for the client `clientID`.
    public init(
        clientID: String,
        issuer: URL? = nil,
        tokenEndpoint: URL? = nil,
        clientAuthentication: ClientAuthentication = .clientSecretBasic,
        grant: Grant = .clientCredentials,
        scopes: [String] = [],
        skew: Duration = .seconds(60)
    ) {
        self.clientID = clientID
        self.issuer = issuer
        self.tokenEndpoint = tokenEndpoint
        self.clientAuthentication = clientAuthentication
        self.grant = grant
        self.scopes = scopes
        self.skew = skew
        refusalBackoff = .seconds(5)
        self.refreshTokenStorage = .keyring
    }

    /// The settings under `keys` (`authentication.oauth2`), checked.
    ///
    /// - Throws: `APIError.Kind.invalidConfiguration` naming the key at fault.
    public init(keys: ConfigurationKeys) throws(APIError) {
        guard let clientID = try keys.nonEmptyString("clientId") else {
            throw keys.invalid("clientId", expected: "the OAuth 2 client ID")
        }
        self.init(clientID: clientID)
        issuer = try Self.endpoint(keys, "issuer")
        tokenEndpoint = try Self.endpoint(keys, "tokenEndpoint")
        deviceAuthorizationEndpoint = try Self.endpoint(keys, "deviceAuthorizationEndpoint")
        authorizationEndpoint = try Self.endpoint(keys, "authorizationEndpoint")
        revocationEndpoint = try Self.endpoint(keys, "revocationEndpoint")
        guard issuer != nil || tokenEndpoint != nil else {
            throw keys.invalid("issuer", expected: "the authorization server's issuer URL, or tokenEndpoint")
        }
        // An endpoint a variable moves away from the file's would receive the file's client
        // secret, private key signature, refresh tokens and the person's login.
        for key in Self.endpointKeys {
            try keys.refuseVariable(for: key, because: "the OAuth 2 client's credentials, refresh tokens and logins would be sent to the endpoint it names")
        }
        let secret = keys.scoped(to: "clientSecret")
        clientSecretStorage = try secret.nonEmptyString("storage").map(APIConfig.StorageKind.init(rawValue:))
        clientSecretName = try secret.nonEmptyString("name")
        privateKeyFile = try keys.path("privateKeyFile")
        let privateKey = keys.scoped(to: "privateKey")
        privateKeyStorage = try privateKey.nonEmptyString("storage").map(APIConfig.StorageKind.init(rawValue:))
        privateKeyName = try privateKey.nonEmptyString("name")
        if privateKeyFile != nil, privateKeyStorage != nil {
            // A service's own choice wins over the top level's; two at one level are a mistake.
            let fileByService = keys.isSetByService("privateKeyFile")
            guard fileByService != keys.isSetByService("privateKey.storage") else {
                throw keys.invalid("privateKey.storage", expected: "either privateKeyFile or privateKey.storage, not both")
            }
            if fileByService {
                privateKeyStorage = nil
                privateKeyName = nil
            } else {
                privateKeyFile = nil
            }
        }
        // A variable that names another stored secret or key than the file's would send it, or
        // a signature made with it, to the file's token endpoint; the default names are made
        // from the client ID, so a variable changing it picks them too.
        for key in Self.storedCredentialKeys {
            try keys.refuseVariable(for: key, because: "it picks which stored secret or key is sent (or signs) to the OAuth 2 token endpoint")
        }
        if clientSecretStorage != nil || privateKeyStorage != nil || privateKeyFile != nil {
            try keys.refuseVariable(
                for: "clientId",
                because: "the client proves who it is with its stored secret or key (whose default name is made from it): another client's would be sent (or sign) to the OAuth 2 token endpoint"
            )
        }
        if privateKeyName != nil, privateKeyStorage == nil {
            throw keys.invalid("privateKey.storage", expected: "the storage kind that keeps the private key named by privateKey.name")
        }
        try Self.refuseAnotherClientsCredentials(keys, settings: self)
        keyID = try keys.nonEmptyString("keyId")
        let hasPrivateKey = privateKeyFile != nil || privateKeyStorage != nil
        let defaultAuthentication: ClientAuthentication =
            hasPrivateKey ? .privateKeyJWT : clientSecretStorage != nil ? .clientSecretBasic : .none
        clientAuthentication = try keys.choice("clientAuthentication") ?? defaultAuthentication
        switch clientAuthentication {
        case .clientSecretBasic, .clientSecretPost:
            guard clientSecretStorage != nil else {
                throw keys.invalid("clientSecret.storage", expected: "the storage kind that keeps the client secret (file, environment, keyring)")
            }
        case .privateKeyJWT:
            guard hasPrivateKey else {
                throw keys.invalid("privateKeyFile", expected: "the PEM file of the client's private key (or privateKey.storage, the storage kind that keeps it)")
            }
        case .none: break
        }
        // What the token may do, and where: a variable must not widen the token the file's
        // server receives (another API's audience, more scopes) for it to replay elsewhere.
        for key in ["scopes", "audience", "resource"] {
            try keys.refuseVariable(for: key, because: "it widens what the token the file's server receives may do, or where it is accepted")
        }
        grant = try keys.choice("grant") ?? (clientAuthentication == .none ? .refreshToken : .clientCredentials)
        scopes = try keys.stringArray("scopes") ?? []
        guard scopes.allSatisfy(Self.isScopeToken) else {
            throw keys.invalid("scopes", expected: "scope names of printable ASCII without spaces, quotes or backslashes")
        }
        audience = try keys.nonEmptyString("audience")
        resource = try keys.nonEmptyString("resource")
        skew = try keys.seconds("skew", allowZero: true) ?? skew
        refusalBackoff = try keys.seconds("refusalBackoff", allowZero: true) ?? refusalBackoff
        // Where the person's refresh tokens are read and written: the file's choice.
        try keys.refuseVariable(for: "refreshTokenStorage", because: "it picks where the refresh tokens are read from and written to")
        refreshTokenStorage = try keys.nonEmptyString("refreshTokenStorage").map(APIConfig.StorageKind.init(rawValue:)) ?? .keyring
    }

    /// The keys that pick which stored secret or key the client proves itself with.
    static let storedCredentialKeys = ["clientSecret.storage", "clientSecret.name", "privateKey.storage", "privateKey.name", "privateKeyFile"]

    /// The endpoint keys: a service that sets any one of them talks to another server, or to
    /// another part of one that the top level's client was not set up for.
    static let endpointKeys = ["issuer", "tokenEndpoint", "deviceAuthorizationEndpoint", "authorizationEndpoint", "revocationEndpoint"]

    /// A service that names a client of its own (a `clientId` other than the top level's), any
    /// endpoint of its own (``endpointKeys``), or a `baseURL` on another origin than the top
    /// level's talks to another server, or as another client:
    /// - it must set its own `service` key, other than the top level's, since the logins and
    ///   refresh tokens kept are keyed by it (a shared one would spend the top level's refresh
    ///   token at the service's server, and a logout of one would end the other's);
    /// - it must name its own client secret and private key: the top level's belong to another
    ///   client, and would be sent (or sign an assertion) to the service's endpoint. The client ID
    ///   is inherited: it is not a secret (RFC 6749 §2.2), and a default secret or key name made
    ///   from an inherited client ID, or one equal to the top level's, names the top level's
    ///   secret, so it is refused too. A service with an endpoint of its own, or on another
    ///   origin, names them explicitly whatever its client ID.
    private static func refuseAnotherClientsCredentials(_ keys: ConfigurationKeys, settings: OAuth2Settings) throws(APIError) {
        // Repeating the top level's client ID is keeping its client, not naming another.
        let ownClient = keys.isSetByService("clientId") && settings.clientID != keys.topLevelString("clientId")
        let ownEndpoint = endpointKeys.first { keys.isSetByService($0) }
        // A service on another origin than the top level's is another server, whatever its
        // OAuth 2 keys: a token got with the top level's client would be sent there.
        let anotherServer = keys.anotherServerReason
        let ownServer = ownEndpoint != nil || anotherServer != nil
        guard ownClient || ownServer else { return }
        let reason =
            if let ownEndpoint { "it sets an OAuth 2 endpoint of its own (\(keys.full(ownEndpoint)))" }
            else if let anotherServer { anotherServer }
            else { "it sets an OAuth 2 client of its own (\(keys.full("clientId")))" }
        try keys.requireOwnServiceKey(because: reason)
        let where_ = "set under services.<name> with its clientId, any of its endpoints or a baseURL on another origin (the top level's is another client's)"
        if settings.clientSecretName != nil, !keys.isOwnedByService("clientSecret.name") {
            throw keys.invalid("clientSecret.name", expected: "the name of the service's own client secret, \(where_)")
        }
        // The default name comes from the client ID: an inherited one names the top level's
        // secret, which must not go to the service's own server; a service with an endpoint of
        // its own names its secret whatever its client ID.
        if settings.clientSecretName == nil, settings.clientSecretStorage != nil, ownServer || !ownClient {
            throw keys.invalid("clientSecret.name", expected: "the name of the service's own client secret, \(where_)")
        }
        if settings.privateKeyName != nil, !keys.isOwnedByService("privateKey.name") {
            throw keys.invalid("privateKey.name", expected: "the name of the service's own private key, \(where_)")
        }
        // The same for the key: its default name comes from the client ID.
        if settings.privateKeyName == nil, settings.privateKeyStorage != nil, ownServer || !ownClient {
            throw keys.invalid("privateKey.name", expected: "the name of the service's own private key, \(where_)")
        }
        if settings.privateKeyFile != nil, !keys.isOwnedByService("privateKeyFile") {
            throw keys.invalid("privateKeyFile", expected: "the service's own private key file, \(where_)")
        }
    }

    /// An endpoint key: `https`, or `http` on a loopback IP address only.
    private static func endpoint(_ keys: ConfigurationKeys, _ key: String) throws(APIError) -> URL? {
        guard let url = try keys.url(key) else { return nil }
        guard OAuth2Endpoints.isAllowed(url) else {
            throw keys.invalid(key, expected: "an https URL (http only on a loopback IP address such as 127.0.0.1 or [::1], not localhost: RFC 8252 §8.3)")
        }
        return url
    }

    /// RFC 6749 §3.3: `scope-token = 1*( %x21 / %x23-5B / %x5D-7E )`.
    static func isScopeToken(_ scope: String) -> Bool {
        OAuth2Grammar.all(scope, OAuth2Grammar.isTokenByte)
    }
}
