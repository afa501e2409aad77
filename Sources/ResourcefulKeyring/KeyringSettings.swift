public import Resourceful

/// The `keyring` storage's settings: the account its items are stored under and the scheme put
/// before a secret. Read from the `authentication.keyring` keys by ``KeyringStorageFactory``, or
/// made in code.
public struct KeyringSettings: Sendable, Equatable {
    /// The account the items are stored under.
    public var account: String
    /// The scheme put before a secret in the header; empty when the items hold whole headers.
    public var scheme: String

    /// Creates settings for `account`, with `scheme` before each secret.
    public init(account: String = "default", scheme: String = "Bearer") {
        self.account = account
        self.scheme = scheme
    }

    /// The settings under `keys` (`authentication.keyring`): `account` and `scheme`, checked.
    ///
    /// - Throws: `APIError.Kind.invalidConfiguration` naming the key at fault.
    public init(keys: ConfigurationKeys) throws(APIError) {
        self.init()
        if let account = try keys.string("account") {
            guard !account.isEmpty, !account.contains("\0") else { throw keys.invalid("account", expected: "a non-empty account name") }
            self.account = account
        }
        if let scheme = try keys.string("scheme") { self.scheme = scheme }
    }
}
