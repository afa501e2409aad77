package import HTTPTypes
package import Logging

extension APIConfig {
    /// A kind of credential storage the configuration can name.
    public enum StorageKind: String, Sendable, Hashable, CaseIterable {
        /// The Linux keyring (``AuthenticationStorage`` from `ResourcefulKeyring`).
        case keyring
        /// Files mounted by the orchestrator, `<directory>/<service>`.
        case file
        /// Environment variables, `<prefix>_<SERVICE>_TOKEN` or `_AUTHORIZATION`.
        case environment
    }

    /// Where the live dependencies get credentials: the storages, in the order they are asked,
    /// and the settings of each (the `authentication.*` keys).
    public struct AuthenticationSettings: Sendable, Equatable {
        /// The storages asked, in order; none means an empty in-memory storage.
        public var storages: [StorageKind]
        /// The storages whose failures are logged and passed over instead of failing the call.
        public var optional: Set<StorageKind>
        /// The directory of the `file` storage.
        public var fileDirectory: String
        /// The scheme put before a file's token; empty when the files hold whole headers.
        public var fileScheme: String
        /// How long a file's header is served before the file is looked at again.
        public var fileRefreshInterval: Duration
        /// The prefix of the `environment` storage's variables.
        public var environmentPrefix: String
        /// The scheme put before a `_TOKEN` variable's value.
        public var environmentScheme: String
        /// The keyring account.
        public var keyringAccount: String
        /// The scheme put before the keyring's secret.
        public var keyringScheme: String
        /// The header field the stored credential is sent in: `Authorization` unless an API takes
        /// a key in a header of its own (`X-API-Key`; set the storages' schemes to empty then).
        /// Whatever its name, it is masked in logs, recordings and cURL exports, and dropped on a
        /// redirect to another origin, as `Authorization` is.
        public var headerName: String

        /// Creates settings: no storage, files under `/run/secrets`, variables under
        /// `RESOURCEFUL_AUTH`, the keyring account `default`, and `Bearer` tokens.
        public init(
            storages: [StorageKind] = [],
            optional: Set<StorageKind> = [],
            fileDirectory: String = "/run/secrets",
            fileScheme: String = "Bearer",
            fileRefreshInterval: Duration = .seconds(1),
            environmentPrefix: String = "RESOURCEFUL_AUTH",
            environmentScheme: String = "Bearer",
            keyringAccount: String = "default",
            keyringScheme: String = "Bearer",
            headerName: String = "Authorization"
        ) {
            self.storages = storages
            self.optional = optional
            self.fileDirectory = fileDirectory
            self.fileScheme = fileScheme
            self.fileRefreshInterval = fileRefreshInterval
            self.environmentPrefix = environmentPrefix
            self.environmentScheme = environmentScheme
            self.keyringAccount = keyringAccount
            self.keyringScheme = keyringScheme
            self.headerName = headerName
        }

        /// The storage these settings describe: a ``ChainedAuthenticationStorage`` of the
        /// configured storages, or an empty ``InMemoryAuthenticationStorage`` when there are none.
        ///
        /// - Parameters:
        ///   - logger: Where the chain logs the failures of optional storages.
        ///   - environment: The variables ``EnvironmentAuthenticationStorage`` reads; the
        ///     process environment, at each call, when `nil`.
        ///   - keyring: Makes the keyring storage; `ResourcefulKeyring` passes one. Without it, a
        ///     configured keyring fails with ``AuthenticationStorageError/Kind/unavailable``
        ///     (passed over when it is optional).
        package func makeStorage(
            logger: Logger,
            environment: [String: String]? = nil,
            keyring: (@Sendable (AuthenticationSettings) -> any AuthenticationStorage)? = nil
        ) -> any AuthenticationStorage {
            guard !storages.isEmpty else { return InMemoryAuthenticationStorage() }
            let links = storages.map { kind -> ChainedAuthenticationStorage.Link in
                let storage: any AuthenticationStorage
                switch kind {
                case .file:
                    storage = FileAuthenticationStorage(
                        directory: fileDirectory,
                        scheme: fileScheme.isEmpty ? nil : fileScheme,
                        refreshInterval: fileRefreshInterval
                    )
                case .environment:
                    storage = EnvironmentAuthenticationStorage(prefix: environmentPrefix, scheme: environmentScheme, environment: environment)
                case .keyring:
                    storage = keyring?(self) ?? UnavailableStorage(
                        error: AuthenticationStorageError(
                            kind: .unavailable,
                            source: "keyring storage",
                            detail: "needs ResourcefulKeyring: build the dependencies with APIDependencies.live(environment:keyring:)"
                        )
                    )
                }
                return ChainedAuthenticationStorage.Link(kind.rawValue, storage, isOptional: optional.contains(kind))
            }
            return ChainedAuthenticationStorage(links, logger: logger)
        }
    }
}

/// A storage that cannot be used here: every call fails with the same error.
extension APIConfig {
    /// The field the stored credential goes in (``AuthenticationSettings/headerName``);
    /// `Authorization` for a name that is not a valid field name (validation refuses it).
    package var credentialField: HTTPField.Name {
        HTTPField.Name(authentication.headerName) ?? .authorization
    }

    /// The masking rules every view of a call uses: the logging settings (``LogSettings``) with
    /// the credential's field (``AuthenticationSettings/headerName``) among the masked headers.
    /// Log lines, error descriptions, ``API/curl(for:)`` and the HTTP cache's keys use it; give it
    /// to `RecordingTransport` and `ReplayingTransport` (`ResourcefulTesting`) too, so that a
    /// recording masks what the logs mask:
    ///
    /// ```swift
    /// let recorder = try RecordingTransport(transport, file: cassette, masking: config.redaction)
    /// ```
    public var redaction: LogSettings {
        // The default, without parsing a field name on every call that logs.
        guard authentication.headerName != "Authorization", credentialField != .authorization else { return logging }
        var settings = logging
        settings.maskedHeaders.append(authentication.headerName)
        return settings
    }
}

struct UnavailableStorage: AuthenticationStorage {
    let error: AuthenticationStorageError

    func authenticationHeader(for service: String) async throws -> String? {
        throw error
    }
}
