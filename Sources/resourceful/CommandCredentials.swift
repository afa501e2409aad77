import Logging
import Resourceful
import ResourcefulKeyring

/// The credential storages of the commands: the chain the configuration names (as
/// `APIDependencies.live(environment:keyring:)` builds it), with `--account` naming the keyring
/// account, so that `credentials` and a call always agree. Both load the configuration with the
/// same `--service`, so the storages and the credential's service are those of that entry.
enum CommandCredentials {
    /// `config` with `account` as its keyring account; the keyring is asked first when the
    /// configuration does not list it.
    static func configure(_ config: inout APIConfig, account: String?) {
        guard let account else { return }
        config.authentication.keyringAccount = account
        if !config.authentication.storages.contains(.keyring) {
            config.authentication.storages.insert(.keyring, at: 0)
        }
    }

    /// The storage `config` describes, the keyring on the session's Secret Service.
    static func storage(for config: APIConfig, logger: Logger) -> any AuthenticationStorage {
        config.authentication.makeStorage(logger: logger) { settings in
            KeyringAuthenticationStorage(account: settings.keyringAccount, scheme: settings.keyringScheme)
        }
    }
}
