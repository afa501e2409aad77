import Logging
import Resourceful
import ResourcefulKeyring
import ResourcefulOAuth2

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

    /// The storage kinds the commands know besides files and variables.
    static let factories: [any AuthenticationStorageFactory] = [KeyringStorageFactory(), OAuth2StorageFactory()]

    /// The storage `config` describes, the keyring on the session's Secret Service, asked through
    /// `transport` when a storage makes requests of its own.
    static func storage(for config: APIConfig, transport: any HTTPTransport, logger: Logger) async throws(APIError) -> any AuthenticationStorage {
        try await config.authentication.makeStorage(
            config: config, factories: factories, logger: logger, environment: nil, transport: transport
        )
    }
}
