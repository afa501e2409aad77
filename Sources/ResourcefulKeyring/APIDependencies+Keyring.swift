public import Resourceful

extension APIDependencies {
    /// The live dependencies with credentials from the Linux keyring: configuration from
    /// `Configs/<environment>.json`, and a ``KeyringAuthenticationStorage`` for `account`.
    ///
    /// ```swift
    /// let api = API(dependencies: try await .live(environment: "development", keyringAccount: "ada"))
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
}
