import Resourceful

/// The `keyring` storage's settings: the account its items are stored under and the scheme put
/// before a secret, read from the `authentication.keyring` keys by ``KeyringStorageFactory``.
struct KeyringSettings: Sendable, Equatable {
    /// The account the items are stored under.
    var account: String
    /// The scheme put before a secret in the header; empty when the items hold whole headers.
    var scheme: String

    /// Creates settings for `account`, with `scheme` before each secret.
    init(account: String = "default", scheme: String = "Bearer") {
        self.account = account
        self.scheme = scheme
    }

    /// The settings under `keys` (`authentication.keyring`): `account` and `scheme`, checked;
    /// `account`, when given, instead of the configured one (which is then not read).
    ///
    /// - Throws: `APIError.Kind.invalidConfiguration` naming the key at fault, saying the
    ///   account given is empty, or naming the environment variable that sets an account other
    ///   than the configuration file's.
    init(keys: ConfigurationKeys, account: String? = nil) throws(APIError) {
        self.init()
        if let account {
            guard Self.isValidAccount(account) else {
                throw APIError(kind: .invalidConfiguration, detail: "the keyring account given instead of \(keys.full("account")) is empty or holds a NUL")
            }
            self.account = account
        } else if let configured = try keys.string("account") {
            guard Self.isValidAccount(configured) else { throw keys.invalid("account", expected: "a non-empty account name") }
            // Another account's items are another login's: a variable must not pick them for
            // the file's server (a program picks one with `account`, a command with --account).
            try keys.refuseVariable(for: "account", because: "it picks whose stored credentials and secrets are sent to the file's server")
            self.account = configured
        }
        if let scheme = try keys.string("scheme") { self.scheme = scheme }
    }

    private static func isValidAccount(_ account: String) -> Bool {
        !account.isEmpty && !account.contains("\0")
    }
}
