package import HTTPTypes
package import Logging

extension APIConfig {
    /// A kind of credential storage the configuration can name in `authentication.storages`:
    /// the package's own (``file``, ``environment``), or one an ``AuthenticationStorageFactory``
    /// brings (``keyring`` from `ResourcefulKeyring`, `oauth2` from `ResourcefulOAuth2`, an app's
    /// own).
    public struct StorageKind: RawRepresentable, Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The name, as the configuration writes it.
        public let rawValue: String

        /// A kind named `rawValue`: letters, digits, `-` and `_`.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// A kind named `value`.
        public init(stringLiteral value: String) {
            self.init(rawValue: value)
        }

        /// The name.
        public var description: String { rawValue }

        /// Whether `name` can name a kind (and a configuration key): ASCII letters, digits,
        /// `-` and `_`, 1 to 64 of them.
        static func isValidName(_ name: String) -> Bool {
            (1...64).contains(name.utf8.count)
                && name.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || $0 == 0x2D || $0 == 0x5F }
        }

        /// The Linux keyring (`ResourcefulKeyring`).
        public static let keyring: StorageKind = "keyring"
        /// Files mounted by the orchestrator, `<directory>/<service>`.
        public static let file: StorageKind = "file"
        /// Environment variables, `<prefix>_<SERVICE>_TOKEN` or `_AUTHORIZATION`.
        public static let environment: StorageKind = "environment"
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
        /// The header field the stored credential is sent in: `Authorization` unless an API takes
        /// a key in a header of its own (`X-API-Key`; set the storages' schemes to empty then).
        /// Whatever its name, it is masked in logs, recordings and cURL exports, and dropped on a
        /// redirect to another origin, as `Authorization` is.
        public var headerName: String
        /// The `authentication` keys as the configuration was read, where storages made by an
        /// ``AuthenticationStorageFactory`` read their own (`authentication.<kind>.*`); `nil` for
        /// settings made in code. Not compared by `==`.
        public var keys: ConfigurationKeys?
        /// The file the settings were loaded from by ``APIConfig/load(environment:configDirectory:environmentVariables:service:)``
        /// and whether its folder was chosen; `nil` otherwise. Not compared by `==`.
        package var origin: APIConfig.FileOrigin?
        /// The keys of other modules' storage kinds the configuration sets (one per module), for
        /// a warning when the program does not link the module. Not compared by `==`.
        package var otherModules: [OtherModuleKeys] = []
        /// What the file names for its own server (credentials, base header fields and query
        /// items), left out because an environment variable moved the base URL to another origin
        /// than the file's, if that happened. Not compared by `==`.
        package var withheldBy: APIConfig.WithheldCredentials? = nil
        /// What environment variables changed of the file's TLS trust and proxy, for the checks a
        /// credential added after loading meets; `nil` when no file was read. Not compared by `==`.
        package var variableRule: APIConfig.VariableRule? = nil

        /// Creates settings: no storage, files under `/run/secrets`, variables under
        /// `RESOURCEFUL_AUTH`, and `Bearer` tokens. The settings of kinds other modules bring
        /// (`authentication.keyring.*`, `authentication.oauth2.*`) are read by their factories.
        public init(
            storages: [StorageKind] = [],
            optional: Set<StorageKind> = [],
            fileDirectory: String = "/run/secrets",
            fileScheme: String = "Bearer",
            fileRefreshInterval: Duration = .seconds(1),
            environmentPrefix: String = "RESOURCEFUL_AUTH",
            environmentScheme: String = "Bearer",
            headerName: String = "Authorization"
        ) {
            self.storages = storages
            self.optional = optional
            self.fileDirectory = fileDirectory
            self.fileScheme = fileScheme
            self.fileRefreshInterval = fileRefreshInterval
            self.environmentPrefix = environmentPrefix
            self.environmentScheme = environmentScheme
            self.headerName = headerName
            self.keys = nil
            self.origin = nil
        }

        /// Whether the settings are the same, the keys they were read from aside.
        public static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.storages == rhs.storages && lhs.optional == rhs.optional && lhs.fileDirectory == rhs.fileDirectory
                && lhs.fileScheme == rhs.fileScheme && lhs.fileRefreshInterval == rhs.fileRefreshInterval
                && lhs.environmentPrefix == rhs.environmentPrefix && lhs.environmentScheme == rhs.environmentScheme
                && lhs.headerName == rhs.headerName
        }

        /// The storage these settings describe: a ``ChainedAuthenticationStorage`` of the
        /// configured storages, or an empty ``InMemoryAuthenticationStorage`` when there are none.
        ///
        /// - Parameters:
        ///   - config: The configuration these settings are part of.
        ///   - factories: The storage kinds known besides `file` and `environment`.
        ///   - logger: Where the chain logs the failures of optional storages.
        ///   - environment: The variables the storages read; the process environment, at each
        ///     call, when `nil`.
        ///   - transport: The API's transport, for storages that make requests of their own.
        ///   - sharedState: The state the fleet shares, for storages that share what they get.
        /// - Throws: ``APIError/Kind/invalidConfiguration`` when a required storage's kind is not
        ///   known here, or a factory refuses its keys. A kind not known here that is optional is
        ///   a storage that fails every lookup (passed over), so that a configuration naming the
        ///   keyring still serves a program built without it.
        package func makeStorage(
            config: APIConfig,
            factories: [any AuthenticationStorageFactory],
            logger: Logger,
            environment: [String: String]?,
            transport: any HTTPTransport,
            sharedState: SharedState? = nil
        ) async throws(APIError) -> any AuthenticationStorage {
            var known: [StorageKind: any AuthenticationStorageFactory] = [:]
            for factory in [FileStorageFactory(), EnvironmentStorageFactory()] as [any AuthenticationStorageFactory] + factories {
                known[factory.kind] = factory
            }
            // Keys of a module this program does not link are not an error (the same file
            // serves programs built with and without it), but they do nothing here: said once
            // per module and file in the process, however many APIs are made from the file.
            for keys in otherModules where keys.section == "authentication" && known[keys.kind] == nil && Self.warned.withLock({ $0.insert("\(keys.module) \(keys.source)").inserted }) {
                logger.warning(
                    "configuration keys read by \(keys.module) are ignored: this program does not link it",
                    metadata: ["key": "\(keys.key)", "source": "\(keys.source)", "kind": "\(keys.kind)"]
                )
            }
            // What a variable's base URL left out: said, so that a call answered 401 there is
            // understood. Names only, never a value.
            if let withheldBy {
                logger.warning(
                    "the configuration file's credentials, base header fields and query items are not sent to the base URL an environment variable names",
                    metadata: ["variable": "\(withheldBy.variable)", "keys": "\(withheldBy.keys.joined(separator: ", "))"]
                )
            }
            guard !storages.isEmpty else { return InMemoryAuthenticationStorage() }
            var links: [ChainedAuthenticationStorage.Link] = []
            for kind in storages {
                let storage: any AuthenticationStorage
                if let factory = known[kind] {
                    let context = AuthenticationStorageContext(
                        config: config, kind: kind, environment: environment, logger: logger, transport: transport, factories: known,
                        sharedState: sharedState
                    )
                    storage = try await factory.makeStorage(context)
                } else if optional.contains(kind) {
                    storage = UnavailableStorage(
                        error: AuthenticationStorageError(
                            kind: .unavailable,
                            source: "\(kind) storage",
                            detail: "is not known to this program (\(Self.hint(for: kind)))"
                        )
                    )
                } else {
                    let names = known.keys.map(\.rawValue).sorted().joined(separator: ", ")
                    throw (keys ?? ConfigurationKeys.empty(scope: "authentication")).invalid(
                        "storages", expected: "storage kinds known to this program: \(names) (\(kind): \(Self.hint(for: kind)))"
                    )
                }
                links.append(ChainedAuthenticationStorage.Link(kind.rawValue, storage, isOptional: optional.contains(kind)))
            }
            return ChainedAuthenticationStorage(links, logger: logger)
        }

        /// The other modules' keys warned of, by module and file (or variable).
        private static let warned = Locked<Set<String>>([])

        /// Where a kind the package knows of comes from.
        private static func hint(for kind: StorageKind) -> String {
            switch kind.rawValue {
            case "keyring": "needs ResourcefulKeyring: build the dependencies with APIDependencies.live(environment:keyring:)"
            case "oauth2": "needs ResourcefulOAuth2: pass OAuth2StorageFactory() to the live dependencies"
            default: "pass its AuthenticationStorageFactory to the live dependencies"
            }
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
