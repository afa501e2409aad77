/// `file`: ``FileAuthenticationStorage`` with the `authentication.file` settings; its secrets
/// are the files of the same directory, read as they are.
struct FileStorageFactory: AuthenticationStorageFactory {
    var kind: APIConfig.StorageKind { .file }

    func makeStorage(_ context: AuthenticationStorageContext) async throws(APIError) -> any AuthenticationStorage {
        let settings = context.config.authentication
        return FileAuthenticationStorage(
            directory: settings.fileDirectory,
            scheme: settings.fileScheme.isEmpty ? nil : settings.fileScheme,
            refreshInterval: settings.fileRefreshInterval,
            logger: context.logger
        )
    }

    func makeSecretStorage(_ context: AuthenticationStorageContext) async throws(APIError) -> (any SecretStorage)? {
        let settings = context.config.authentication
        return FileAuthenticationStorage(
            directory: settings.fileDirectory, scheme: nil, refreshInterval: settings.fileRefreshInterval, logger: context.logger
        )
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
    /// The content of the file `name` in the directory, read at each call, without its last line
    /// breaks, whatever the scheme; line breaks inside are kept (a PEM key has them).
    package func secret(named name: String) async throws -> String? {
        guard !name.isEmpty, !name.contains("/"), !name.contains("\0"), name != ".", name != ".." else {
            throw AuthenticationStorageError(kind: .invalidValue, source: "secret \(name.debugDescription)", detail: "cannot name a file in \(directory)")
        }
        return try await secretFile(at: path(for: name))
    }
}

extension EnvironmentAuthenticationStorage: SecretStorage {
    /// The largest secret read, as for a file.
    static let maximumSecretBytes = 64 * 1024

    /// The variable `<prefix>_<NAME>` (`name` upper-cased, every character other than `A`–`Z`
    /// and `0`–`9` made `_`), without its last line breaks; line breaks inside are kept (a PEM
    /// key has them).
    package func secret(named name: String) async throws -> String? {
        let variable = String(Self.variableName(prefix: prefix, service: name, suffix: "").dropLast())
        guard let value = lookup(variable)?.trimmingLineEnds else { return nil }
        let source = "environment variable \(variable)"
        guard !value.isEmpty else { throw AuthenticationStorageError(kind: .empty, source: source, detail: "is set but empty") }
        guard !value.contains("\0") else { throw AuthenticationStorageError(kind: .invalidValue, source: source, detail: "holds a NUL") }
        guard value.utf8.count <= Self.maximumSecretBytes else {
            throw AuthenticationStorageError(kind: .tooLarge, source: source, detail: "holds more than the limit of \(Self.maximumSecretBytes) bytes")
        }
        return value
    }
}
