public import Resourceful

/// The `oauth2` storage kind: an ``OAuth2AuthenticationStorage`` from the
/// `authentication.oauth2` keys, its client secret from the storage kind
/// `authentication.oauth2.clientSecret.storage` names (its private key from
/// `authentication.oauth2.privateKeyFile` or the kind `privateKey.storage` names), its refresh tokens in
/// `authentication.oauth2.refreshTokenStorage` (`keyring` unless set; `sharedState` for the
/// fleet's, ``SharedState/refreshTokens``), its requests through the
/// API's transport, its `client_credentials` tokens shared by the fleet when the dependencies
/// have a shared state that keeps tokens (``AuthenticationStorageContext/sharedState``).
///
/// ```swift
/// let deps = try await APIDependencies.live(environment: "production", storageFactories: [OAuth2StorageFactory()])
/// ```
public struct OAuth2StorageFactory: AuthenticationStorageFactory {
    /// A factory.
    public init() {}

    /// `oauth2`.
    public var kind: APIConfig.StorageKind { "oauth2" }

    /// The `refreshTokenStorage` that names the fleet's shared state (``SharedState/refreshTokens``):
    /// refresh tokens renewed under the fleet's lease, rotated with a compare-and-set.
    public static let sharedStateKind: APIConfig.StorageKind = "sharedState"

    /// The storage the `authentication.oauth2` keys describe.
    public func makeStorage(_ context: AuthenticationStorageContext) async throws(APIError) -> any AuthenticationStorage {
        let settings = try OAuth2Settings(keys: context.keys)
        var clientSecret: (any SecretStorage)?
        if let kind = settings.clientSecretStorage {
            clientSecret = try await context.secretStorage(kind, key: "clientSecret.storage")
        }
        var privateKey: (any SecretStorage)?
        if let kind = settings.privateKeyStorage, settings.clientAuthentication == .privateKeyJWT {
            privateKey = try await context.secretStorage(kind, key: "privateKey.storage")
        }
        var refreshTokens: (any WritableSecretStorage)?
        if settings.grant == .refreshToken, settings.refreshTokenStorage == Self.sharedStateKind {
            // The fleet's own, beside its access tokens.
            guard let shared = context.sharedState?.refreshTokens, context.sharedState?.tokens != nil else {
                throw context.keys.invalid(
                    "refreshTokenStorage", expected: "a storage kind, or sharedState with a shared state that keeps tokens (a sealing key)")
            }
            refreshTokens = shared
        } else if settings.grant == .refreshToken {
            let storage = try await context.secretStorage(settings.refreshTokenStorage, key: "refreshTokenStorage")
            guard let writable = storage as? any WritableSecretStorage else {
                throw context.keys.invalid("refreshTokenStorage", expected: "a storage kind that can keep secrets it is given, such as keyring")
            }
            refreshTokens = writable
        }
        do {
            return try await OAuth2AuthenticationStorage(
                settings: settings, transport: context.transport, clientSecret: clientSecret, privateKey: privateKey, refreshTokens: refreshTokens,
                timeout: context.config.timeout, sharedTokens: context.sharedState?.tokens, logger: context.logger
            )
        } catch {
            throw context.keys.invalid("privateKeyFile", expected: "a usable private key file (\(error.detail))")
        }
    }
}
