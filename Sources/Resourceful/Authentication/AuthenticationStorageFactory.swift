import Foundation
public import Logging

/// Makes one kind of credential storage from the configuration: the kinds
/// `authentication.storages` can name.
///
/// The package's own kinds (`file`, `environment`) are always known; other modules register
/// theirs by passing a factory to the live dependencies, as `ResourcefulKeyring` does for
/// `keyring` and `ResourcefulOAuth2` for `oauth2`, and so can an app for a storage of its own:
///
/// ```swift
/// struct VaultStorageFactory: AuthenticationStorageFactory {
///     let kind: APIConfig.StorageKind = "vault"
///     func makeStorage(_ context: AuthenticationStorageContext) async throws(APIError) -> any AuthenticationStorage {
///         // `authentication.vault.address` in the configuration file.
///         guard let address = try context.keys.url("address") else {
///             throw context.keys.invalid("address", expected: "the vault's URL")
///         }
///         return VaultStorage(address: address)
///     }
/// }
/// let deps = try await APIDependencies.live(environment: "production", storageFactories: [VaultStorageFactory()])
/// ```
public protocol AuthenticationStorageFactory: Sendable {
    /// The name `authentication.storages` uses for this kind; its keys are under
    /// `authentication.<kind>`.
    var kind: APIConfig.StorageKind { get }

    /// Makes the storage, reading and checking its keys through `context.keys`.
    ///
    /// - Throws: ``APIError/Kind/invalidConfiguration`` naming a key at fault.
    func makeStorage(_ context: AuthenticationStorageContext) async throws(APIError) -> any AuthenticationStorage

    /// A storage of this kind that hands out secrets as they are stored (a client secret, a
    /// private key), for the other storages that need one; `nil` when this kind keeps none. The
    /// default is `nil`.
    func makeSecretStorage(_ context: AuthenticationStorageContext) async throws(APIError) -> (any SecretStorage)?
}

extension AuthenticationStorageFactory {
    /// This kind keeps no secrets for other storages.
    public func makeSecretStorage(_ context: AuthenticationStorageContext) async throws(APIError) -> (any SecretStorage)? {
        nil
    }
}

/// What an ``AuthenticationStorageFactory`` makes its storage from.
public struct AuthenticationStorageContext: Sendable {
    /// The whole configuration.
    public let config: APIConfig
    /// The keys under `authentication.<kind>`; keys of a configuration built in code are not set.
    public let keys: ConfigurationKeys
    /// The environment variables the storages read; the process environment when `nil`.
    public let environment: [String: String]?
    /// Where storages log.
    public let logger: Logger
    /// The transport the API sends its calls through, for a storage that must make requests of
    /// its own (an OAuth 2 token endpoint). It is usable once the dependencies are made.
    public let transport: any HTTPTransport
    /// The state the fleet shares (`sharedState.kind`), for a storage that shares what it gets,
    /// such as OAuth 2 access tokens (``SharedState/tokens``); `nil` when none is configured.
    public let sharedState: SharedState?
    let factories: [APIConfig.StorageKind: any AuthenticationStorageFactory]

    init(
        config: APIConfig,
        kind: APIConfig.StorageKind,
        environment: [String: String]?,
        logger: Logger,
        transport: any HTTPTransport,
        factories: [APIConfig.StorageKind: any AuthenticationStorageFactory],
        sharedState: SharedState? = nil
    ) {
        self.sharedState = sharedState
        self.config = config
        let authentication = config.authentication.keys ?? ConfigurationKeys.empty(scope: "authentication")
        self.keys = authentication.scoped(to: kind.rawValue)
        self.environment = environment
        self.logger = logger
        self.transport = transport
        self.factories = factories
    }

    /// The secrets kept by the storage kind `kind` (`file`, `environment`, `keyring`), read with
    /// that kind's own settings.
    ///
    /// - Throws: ``APIError/Kind/invalidConfiguration`` when no factory of that kind is known
    ///   here, or it keeps no secrets.
    public func secretStorage(_ kind: APIConfig.StorageKind, key: String) async throws(APIError) -> any SecretStorage {
        try await Self.secretStorage(
            kind, key: key, keys: keys, config: config, environment: environment, logger: logger, transport: transport,
            factories: factories, sharedState: sharedState)
    }

    /// The secrets kept by the storage kind `kind` among `factories`; an error names `key` under
    /// `keys` when there is none of that kind, or it keeps no secrets.
    static func secretStorage(
        _ kind: APIConfig.StorageKind,
        key: String,
        keys: ConfigurationKeys,
        config: APIConfig,
        environment: [String: String]?,
        logger: Logger,
        transport: any HTTPTransport,
        factories: [APIConfig.StorageKind: any AuthenticationStorageFactory],
        sharedState: SharedState?
    ) async throws(APIError) -> any SecretStorage {
        guard let factory = factories[kind] else {
            throw keys.invalid(key, expected: "a storage kind known here: " + factories.keys.map(\.rawValue).sorted().joined(separator: ", "))
        }
        let context = AuthenticationStorageContext(
            config: config, kind: kind, environment: environment, logger: logger, transport: transport, factories: factories,
            sharedState: sharedState
        )
        guard let storage = try await factory.makeSecretStorage(context) else {
            throw keys.invalid(key, expected: "a storage kind that keeps secrets")
        }
        return storage
    }
}

/// Where a storage gets a secret it needs as stored, without a scheme before it: an OAuth 2
/// client secret or private key, a refresh token.
///
/// Implementations must never log a secret or put it in an error's description.
public protocol SecretStorage: Sendable {
    /// The secret stored under `name`, or `nil` when there is none.
    func secret(named name: String) async throws -> String?
}

/// A ``SecretStorage`` that can also keep and forget secrets, as the keyring can.
public protocol WritableSecretStorage: SecretStorage {
    /// Keeps `secret` under `name`, replacing what was there.
    func storeSecret(_ secret: String, named name: String) async throws
    /// Forgets the secret under `name`; whether there was one.
    @discardableResult
    func deleteSecret(named name: String) async throws -> Bool
}

/// A ``WritableSecretStorage`` that writes a rotated secret only over the one that was spent
/// (compare-and-set), such as `ResourcefulPostgres`'s `PostgresRefreshTokenStorage`, which a fleet
/// of instances shares.
///
/// An OAuth 2 storage whose refresh tokens are kept in one, and whose access tokens are shared
/// (``SharedTokenCache``), renews under the fleet's lease instead of a lock file, and stores each
/// rotated refresh token with ``replaceSecret(named:spent:with:)``: two instances never both
/// write over one refresh token.
///
/// Before a refresh token is spent it is claimed (``claimSecret(named:spending:until:)``): a mark
/// in the storage, not in a lease, so that an instance whose lease was lost while its request was
/// out (a dropped connection to the store) still keeps every other instance from spending the
/// same token until its request has ended and its successor is written.
public protocol RotatingSecretStorage: WritableSecretStorage {
    /// Replaces the secret under `name` with `new` if it is still `spent`; whether it was (`false`
    /// when it is gone, or another secret took its place meanwhile). A claim on `spent` ends with
    /// it.
    func replaceSecret(named name: String, spent: String, with new: String) async throws -> Bool

    /// Marks `secret` under `name` as being spent by this caller until `deadline`, and for the
    /// time the storage may take to write its successor after it; only when it is still the one
    /// stored and no other caller's mark on it is running.
    func claimSecret(named name: String, spending secret: String, until deadline: ContinuousClock.Instant) async throws -> SecretClaim

    /// Ends this caller's claim on `secret` under `name`, for a secret that was not spent after
    /// all (the server refused the request, or rotates no tokens); failing to end it costs only
    /// the wait until it runs out.
    func releaseClaim(named name: String, spending secret: String) async

    /// Says that the request spending a claimed `secret` under `name` ended without a successor
    /// to write (no answer, a server error, a logout meanwhile): the claim is left to run out,
    /// since the secret may have been spent, but nothing waits for its successor any more (a
    /// shutdown waiting for the rotation's write). The default does nothing.
    func abandonClaim(named name: String, spending secret: String) async
}

extension RotatingSecretStorage {
    /// Nothing waits for a claim's successor in a storage without this step.
    public func abandonClaim(named name: String, spending secret: String) async {}
}

/// What ``RotatingSecretStorage/claimSecret(named:spending:until:)`` found.
public enum SecretClaim: Sendable, Equatable {
    /// The secret is this caller's to spend.
    case claimed
    /// Another caller is spending it: its successor is written, or the claim runs out, soon.
    case heldElsewhere
    /// Another secret, or none, is stored now: read it again.
    case replaced
}
