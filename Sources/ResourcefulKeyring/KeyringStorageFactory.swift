public import Resourceful

/// The `keyring` storage kind: a ``KeyringAuthenticationStorage`` for
/// `authentication.keyring.account`, with `authentication.keyring.scheme` before its secrets. Its
/// secrets, for storages that need one (an OAuth 2 refresh token), are the same account's items,
/// read and written as they are.
///
/// ```swift
/// let deps = try await APIDependencies.live(environment: "development", storageFactories: [KeyringStorageFactory()])
/// ```
public struct KeyringStorageFactory: AuthenticationStorageFactory {
    /// The keyring the storages use.
    public let keyring: Keyring

    /// A factory of storages on `keyring`.
    public init(keyring: Keyring = Keyring()) {
        self.keyring = keyring
    }

    /// `keyring`.
    public var kind: APIConfig.StorageKind { .keyring }

    /// A ``KeyringAuthenticationStorage`` for the configured account and scheme.
    public func makeStorage(_ context: AuthenticationStorageContext) async throws(APIError) -> any AuthenticationStorage {
        let settings = context.config.authentication
        return KeyringAuthenticationStorage(account: settings.keyringAccount, scheme: settings.keyringScheme, keyring: keyring)
    }

    /// The configured account's items, as they are stored.
    public func makeSecretStorage(_ context: AuthenticationStorageContext) async throws(APIError) -> (any SecretStorage)? {
        KeyringSecretStorage(account: context.config.authentication.keyringAccount, keyring: keyring)
    }
}

/// One keyring account's items as secrets: the item whose service is the secret's name.
public struct KeyringSecretStorage: WritableSecretStorage {
    /// The account the items are stored under.
    public let account: String
    /// The keyring.
    public let keyring: Keyring

    /// The secrets of `account` on `keyring`.
    public init(account: String, keyring: Keyring = Keyring()) {
        self.account = account
        self.keyring = keyring
    }

    /// The item for `name`, or `nil`.
    public func secret(named name: String) async throws -> String? {
        try await keyring.lookup(service: name, account: account)
    }

    /// Stores `secret` as the item for `name`, replacing any.
    public func storeSecret(_ secret: String, named name: String) async throws {
        try await keyring.store(secret, service: name, account: account)
    }

    /// Deletes the item for `name`.
    @discardableResult
    public func deleteSecret(named name: String) async throws -> Bool {
        try await keyring.delete(service: name, account: account)
    }
}
