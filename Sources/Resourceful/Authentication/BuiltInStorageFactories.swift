/// `file`: ``FileAuthenticationStorage`` with the `authentication.file` settings; its secrets
/// are the files of the same directory, read as they are.
struct FileStorageFactory: AuthenticationStorageFactory {
    var kind: APIConfig.StorageKind { .file }

    func makeStorage(_ context: AuthenticationStorageContext) async throws(APIError) -> any AuthenticationStorage {
        let settings = context.config.authentication
        return FileAuthenticationStorage(
            directory: settings.fileDirectory,
            scheme: settings.fileScheme.isEmpty ? nil : settings.fileScheme,
            refreshInterval: settings.fileRefreshInterval
        )
    }

    func makeSecretStorage(_ context: AuthenticationStorageContext) async throws(APIError) -> (any SecretStorage)? {
        let settings = context.config.authentication
        return FileAuthenticationStorage(directory: settings.fileDirectory, scheme: nil, refreshInterval: settings.fileRefreshInterval)
    }
}

/// `environment`: ``EnvironmentAuthenticationStorage`` with the `authentication.environment`
/// settings; its secrets are the variables `<prefix>_<NAME>`.
struct EnvironmentStorageFactory: AuthenticationStorageFactory {
    var kind: APIConfig.StorageKind { .environment }

    func makeStorage(_ context: AuthenticationStorageContext) async throws(APIError) -> any AuthenticationStorage {
        let settings = context.config.authentication
        return EnvironmentAuthenticationStorage(prefix: settings.environmentPrefix, scheme: settings.environmentScheme, environment: context.environment)
    }

    func makeSecretStorage(_ context: AuthenticationStorageContext) async throws(APIError) -> (any SecretStorage)? {
        let settings = context.config.authentication
        return EnvironmentAuthenticationStorage(prefix: settings.environmentPrefix, scheme: settings.environmentScheme, environment: context.environment)
    }
}

extension FileAuthenticationStorage: SecretStorage {
    /// The content of the file `name` in the directory, without its last line break, whatever
    /// the scheme.
    package func secret(named name: String) async throws -> String? {
        try await FileAuthenticationStorage(directory: directory, scheme: nil, refreshInterval: .zero).authenticationHeader(for: name)
    }
}

extension EnvironmentAuthenticationStorage: SecretStorage {
    /// The variable `<prefix>_<NAME>` (`name` upper-cased, every character other than `A`–`Z`
    /// and `0`–`9` made `_`), without its last line break.
    package func secret(named name: String) async throws -> String? {
        let variable = Self.variableName(prefix: prefix, service: name, suffix: "").dropLast()
        return try lookupChecked(String(variable))
    }
}
