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
    /// not list the keyring. The keyring item is `config.service`'s: on a base URL of another
    /// origin than the file's, ``CallTarget`` has made that the new URL's host (as without a
    /// file), so `account` never brings back the file's credential there.
    static func configure(_ config: inout APIConfig, account: String?) {
        guard account != nil, !config.authentication.storages.contains(.keyring) else { return }
        config.authentication.storages.insert(.keyring, at: 0)
    }

    /// What a user does to choose the configuration's folder.
    static let howToChoose =
        "choose it with --config-directory (such as --config-directory Configs) or an absolute RESOURCEFUL_CONFIG_DIR if you trust whoever wrote it"

    /// Refuses a configuration found in the working directory's `Configs` by default that names
    /// credential storages: a cloned repository's `Configs/` must not choose both a secret and
    /// where it goes. The error names the file and how to choose it.
    static func refuseUnchosen(_ config: APIConfig) throws(APIError) {
        try config.refuseCredentialsFromUnchosenFile(howToChoose: howToChoose)
    }

    /// The storage kinds the commands know besides files and variables: the keyring for
    /// `account` (the configured one when `nil`), and OAuth 2. Each refuses to be made from a
    /// configuration that was not chosen (``refuseUnchosen(_:)``).
    static func factories(account: String?, keyring: Keyring = Keyring()) -> [any AuthenticationStorageFactory] {
        [
            ChosenConfigurationOnly(KeyringStorageFactory(keyring: keyring, account: account)),
            ChosenConfigurationOnly(OAuth2StorageFactory()),
        ]
    }

    /// The storage `config` describes, the keyring on the session's Secret Service for
    /// `account`, asked through `transport` when a storage makes requests of its own.
    static func storage(
        for config: APIConfig, account: String?, transport: any HTTPTransport, logger: Logger
    ) async throws(APIError) -> any AuthenticationStorage {
        try refuseUnchosen(config)
        return try await config.authentication.makeStorage(
            config: config, factories: factories(account: account), logger: logger, environment: nil, transport: transport
        )
    }
}

/// A storage factory that makes nothing from a configuration the user did not choose.
struct ChosenConfigurationOnly: AuthenticationStorageFactory {
    let factory: any AuthenticationStorageFactory

    init(_ factory: any AuthenticationStorageFactory) {
        self.factory = factory
    }

    var kind: APIConfig.StorageKind { factory.kind }

    func makeStorage(_ context: AuthenticationStorageContext) async throws(APIError) -> any AuthenticationStorage {
        try CommandCredentials.refuseUnchosen(context.config)
        return try await factory.makeStorage(context)
    }

    func makeSecretStorage(_ context: AuthenticationStorageContext) async throws(APIError) -> (any SecretStorage)? {
        try CommandCredentials.refuseUnchosen(context.config)
        return try await factory.makeSecretStorage(context)
    }
}
