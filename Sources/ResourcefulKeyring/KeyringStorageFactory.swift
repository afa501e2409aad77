public import Resourceful

/// The `keyring` storage kind: a ``KeyringAuthenticationStorage`` with the settings of the
/// `authentication.keyring` keys (`account`, `scheme`). Its secrets, for storages that need one
/// (an OAuth 2 refresh token or client secret), are the same account's items, read and written as
/// they are.
///
/// An account given here wins over `authentication.keyring.account`, as a command's
/// `--account` option does:
///
/// ```swift
/// let deps = try await APIDependencies.live(environment: "development", storageFactories: [KeyringStorageFactory()])
/// let ada = try await APIDependencies.live(environment: "development", storageFactories: [KeyringStorageFactory(account: "ada")])
/// ```
public struct KeyringStorageFactory: AuthenticationStorageFactory {
    /// The keyring the storages use.
    let keyring: Keyring
    /// The account that wins over the configuration's, if any.
    let account: String?

    /// A factory of storages on `keyring`, for `account` when given, else the configured one.
    public init(keyring: Keyring = Keyring(), account: String? = nil) {
        self.keyring = keyring
        self.account = account
    }

    /// `keyring`.
    public var kind: APIConfig.StorageKind { .keyring }

    /// The settings of `context`'s keys, with this factory's account if it has one.
    func settings(_ context: AuthenticationStorageContext) throws(APIError) -> KeyringSettings {
        try KeyringSettings(keys: context.keys, account: account)
    }

    /// A ``KeyringAuthenticationStorage`` for the configured account and scheme.
    public func makeStorage(_ context: AuthenticationStorageContext) async throws(APIError) -> any AuthenticationStorage {
        let settings = try settings(context)
        return KeyringAuthenticationStorage(account: settings.account, scheme: settings.scheme, keyring: keyring)
    }

    /// The configured account's items, as they are stored.
    public func makeSecretStorage(_ context: AuthenticationStorageContext) async throws(APIError) -> (any SecretStorage)? {
        KeyringSecretStorage(account: try settings(context).account, keyring: keyring)
    }
}

/// One keyring account's items as secrets: the item whose service is the secret's name.
public struct KeyringSecretStorage: WritableSecretStorage {
    /// The account the items are stored under.
    let account: String
    /// The keyring.
    let keyring: Keyring

    /// The secrets of `account` on `keyring`.
    public init(account: String, keyring: Keyring = Keyring()) {
        self.account = account
        self.keyring = keyring
    }

    /// The item for `name` without the line breaks at its end (`echo "$SECRET" | secret-tool
    /// store …` stores one), or `nil`.
    public func secret(named name: String) async throws -> String? {
        try await keyring.lookup(service: name, account: account)?.trimmingLineEnds
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
