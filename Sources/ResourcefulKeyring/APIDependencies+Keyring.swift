import Foundation
public import Resourceful

extension APIDependencies {
    /// The live dependencies with credentials from the Linux keyring: configuration from
    /// `Configs/<environment>.json`, and a ``KeyringAuthenticationStorage`` for `account`.
    ///
    /// ```swift
    /// let api = API(dependencies: try await APIDependencies.live(environment: "development", keyringAccount: "ada"))
    /// ```
    public static func live(
        environment: String,
        keyringAccount account: String,
        scheme: String = "Bearer",
        keyring: Keyring = Keyring(),
        configDirectory: String? = nil
    ) async throws -> APIDependencies {
        try await live(
            environment: environment,
            configDirectory: configDirectory,
            authenticationStorage: KeyringAuthenticationStorage(account: account, scheme: scheme, keyring: keyring)
        )
    }

    /// The live dependencies with the credential storages the configuration names, the keyring
    /// among them: `Configs/<environment>.json` and the environment, and a
    /// ``KeyringAuthenticationStorage`` on `keyring` for `authentication.keyring.account` wherever
    /// `authentication.storages` lists `keyring`. `service` picks one of the file's `services`,
    /// and the HTTP client is shared as in
    /// ``Resourceful/APIDependencies/live(environment:configDirectory:environmentVariables:authenticationStorage:storageFactories:sharedStateFactories:service:)``.
    ///
    /// ```swift
    /// let api = API(dependencies: try await APIDependencies.live(environment: "development", keyring: Keyring()))
    /// ```
    public static func live(
        environment: String,
        keyring: Keyring,
        configDirectory: String? = nil,
        environmentVariables: [String: String]? = nil,
        service: String? = nil
    ) async throws -> APIDependencies {
        let variables = environmentVariables ?? TransportEnvironment.process()
        let file = APIConfig.file(environment: environment, configDirectory: configDirectory, variables: variables)
        let config = try await APIConfig.load(file: file, environmentVariables: variables, service: service)
        return try await live(
            config: config, environmentVariables: environmentVariables, storageFactories: [KeyringStorageFactory(keyring: keyring)], sharedAs: file,
            transportEnvironment: TransportEnvironment.restricted(variables)
        )
    }
}
