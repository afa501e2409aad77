import Logging
import Resourceful
import ResourcefulKeyring
import ResourcefulOAuth2

/// The credential storages of the commands: the chain the configuration names (as
/// `APIDependencies.live(environment:keyring:)` builds it), with `--account` naming the keyring
/// account, so that `credentials` and a call always agree. Both load the configuration with the
/// same `--service`, so the storages and the credential's service are those of that entry.
enum CommandCredentials {
    /// `config` with the keyring asked first when `account` is given and the configuration does
    /// not list the keyring.
    static func configure(_ config: inout APIConfig, account: String?) {
        guard account != nil, !config.authentication.storages.contains(.keyring) else { return }
        config.authentication.storages.insert(.keyring, at: 0)
    }

    /// The storage kinds the commands know besides files and variables: the keyring for
    /// `account` (the configured one when `nil`), and OAuth 2.
    static func factories(account: String?, keyring: Keyring = Keyring()) -> [any AuthenticationStorageFactory] {
        [KeyringStorageFactory(keyring: keyring, account: account), OAuth2StorageFactory()]
    }

    /// The storage `config` describes, the keyring on the session's Secret Service for
    /// `account`, asked through `transport` when a storage makes requests of its own.
    static func storage(
        for config: APIConfig, account: String?, transport: any HTTPTransport, logger: Logger
    ) async throws(APIError) -> any AuthenticationStorage {
        try await config.authentication.makeStorage(
            config: config, factories: factories(account: account), logger: logger, environment: nil, transport: transport
        )
    }
}
