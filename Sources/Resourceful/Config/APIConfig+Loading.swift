public import Configuration
import Foundation
import Logging
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension APIConfig {
    /// The largest configuration file read.
    static let maximumFileBytes = 1 << 20

    /// The longest a configuration file's loading waits for its file system: the file is read on
    /// a thread of its own (``OffPoolWork``), so that a hung network mount holds that thread, not
    /// the caller's; past this, loading fails (``APIConfigError/Kind/unanswered``).
    static let fileWait: Duration = .seconds(10)

    /// Runs `body` (calls to the file system of `file`) on a thread of its own, waiting at most
    /// ``fileWait``, or until the task is cancelled.
    static func offPool<T: Sendable>(_ file: String, _ body: @escaping @Sendable () -> T) async throws(APIConfigError) -> T {
        switch await OffPoolWork.run(until: .now + fileWait, abandon: { (_: T) in }, body) {
        case .done(let value): return value
        case .timedOut, .cancelled: throw APIConfigError(kind: .unanswered, file: file, source: file, expected: "\(fileWait)")
        }
    }

    /// The prefix of environment variables that override configuration keys.
    package static let environmentVariablePrefix = "RESOURCEFUL"

    /// Reads a configuration from an app's own configuration reader, with its providers, secrets
    /// handling and reloading; scope it to where the keys are (`reader.scoped(to: "upstream")`).
    ///
    /// ## Configuration keys
    /// - `baseURL` (string, required): the absolute `http` or `https` URL paths are resolved
    ///   against; no query, fragment or user information.
    /// - `service` (string, required): the credential storage's key for this API.
    /// - `baseHeaders` (string array, optional): `Name: value` header fields sent with every request.
    /// - `baseQueryItems` (string array, optional): `name=value` query items sent with every
    ///   request, such as `api-version=2024-01-01`; a service's own list replaces the top level's.
    /// - `timeout` (double, seconds, default 30): a call's deadline, attempts and waits included.
    /// - `maxResponseBytes` (int, default 10 MiB): the largest response body accepted.
    /// - `coding.keyStrategy` (`useDefaultKeys` or `snakeCase`), `coding.dateStrategy`
    ///   (`iso8601`, `secondsSince1970` or `millisecondsSince1970`),
    ///   `coding.decoder` (`foundation` or `fast`), `coding.arrayFormat` (`brackets`, `indices`,
    ///   `repeated` or `comma`).
    /// - `logging.level` (a swift-log level), `logging.maskedHeaders` and `logging.maskedBodyKeys`
    ///   (string arrays, added to the built-in sensitive names), `logging.maxBodyBytes` (int).
    /// - `retry.maxAttempts` (int), `retry.baseDelay` and `retry.maxDelay` (double, seconds),
    ///   `retry.retryableStatuses` (string array of status codes).
    /// - `http.maximumConnectionsPerHost` (int), `http.idleTimeout`, `http.connectRetryBudget` and `http.connectTimeout`
    ///   (double, seconds), `http.maxRedirects` (int), `http.redirects.sensitiveHeaders` (string
    ///   array), `http.decompression` (bool), `http.maxDecompressionRatio` (int),
    ///   `http.dangerouslyDisableCertificateVerification` (bool).
    /// - `http.version` (`automatic`: HTTP/2 where the server offers it, or `http1`).
    /// - `http.proxy` (`environment`, the default: `https_proxy` else `HTTPS_PROXY`, `http_proxy`
    ///   (upper-case `HTTP_PROXY` is never read), `no_proxy` else `NO_PROXY`, as curl reads them;
    ///   `none`; or an `http://host:port` URL), `http.proxyCredentialService` (string).
    /// - `http.tls.caFile` and `http.tls.caDirectory` (string paths), `http.tls.trustSystemRoots`
    ///   (bool, default true), `http.tls.minimumVersion` (`1.2` or `1.3`),
    ///   `http.tls.clientCertificateFile` and `http.tls.clientKeyFile` (PEM paths, both or neither).
    /// - `cache.storesAuthorizedResponses` (bool, default false): whether ``HTTPCacheMiddleware``
    ///   may store answers to requests with `Authorization` that do not say `public`.
    /// - `authentication.storages` and `authentication.optional` (string arrays of storage kinds:
    ///   `file`, `environment`, and those a factory brings), `authentication.file.directory`,
    ///   `.scheme`, `.refreshInterval`, `authentication.environment.prefix`, `.scheme`,
    ///   `authentication.headerName` (the field the credential is sent in; `Authorization` unless
    ///   set). The keys of the kinds a factory brings (`authentication.keyring.*`,
    ///   `authentication.oauth2.*`) are read by that factory when the dependencies are made.
    ///
    /// Ranges and defaults are in <doc:Configuration>. Keys this reader holds that nothing reads
    /// are not refused here, as they are in a file ``load(file:environmentVariables:service:)``
    /// reads: a reader cannot list its keys, and an app's reader holds the app's own.
    ///
    /// - Throws: ``APIError/Kind/invalidConfiguration``, naming the key at fault and what it
    ///   should hold: a required key missing, a value that cannot be read as the key's type, or
    ///   one out of range. Never the value itself.
    public init(configReader: ConfigReader) throws(APIError) {
        do {
            self = try ConfigKeyReader(reader: configReader, file: nil, variables: [:]).apiConfig()
        } catch {
            throw error.apiError
        }
    }

    /// Loads `<configDirectory>/<environment>.json`, with environment variables overriding its keys.
    ///
    /// The directory is `configDirectory` if given, else the `RESOURCEFUL_CONFIG_DIR` environment
    /// variable, else `Configs` in the current directory; an empty one counts as not given.
    ///
    /// A configuration chooses secrets (a variable, a file, a keyring item, a client secret) and
    /// the hosts they are sent to, so it must be one its user chose. The `resourceful` tool
    /// refuses credentials from a file it found in the working directory's `Configs` by default
    /// (a cloned repository's) until the user passes `--config-directory` or sets
    /// `RESOURCEFUL_CONFIG_DIR` to an absolute path. A relative `RESOURCEFUL_CONFIG_DIR` is read
    /// but chooses nothing: a variable lives on across folders, so `Configs` would be whichever
    /// folder of that name the working directory holds. An app is not refused: its `Configs` is its own, but pass
    /// `configDirectory` (an absolute path, or one from the app's own settings) so that the app
    /// does not read whatever `Configs` is where it happens to be started. A key such as `logging.level` is
    /// overridden by `RESOURCEFUL_LOGGING_LEVEL` (camel case split at word boundaries:
    /// `baseURL` → `RESOURCEFUL_BASE_URL`); lists are comma-separated. The keys are listed in
    /// <doc:Configuration>.
    ///
    /// ## Several services
    ///
    /// One file may describe several upstream services under `services.<name>`: each key there
    /// (`baseURL`, `service`, `baseHeaders`, `authentication`, `http.tls.caFile`, any other)
    /// takes the place of the same key at the top level, which holds what they share. `service`
    /// picks one; its keys are overridden by `RESOURCEFUL_SERVICES_<NAME>_…` variables, and the
    /// top level's by `RESOURCEFUL_…` ones.
    ///
    /// A service whose `baseURL` (its key or its variable) is on another origin than the top
    /// level's, or whose top level has none, is another server: it inherits no credential. It
    /// sets its own `service` (other than the top level's: every credential storage, an app's own
    /// included, looks the credential up by it), its own `baseHeaders` (`[]` for none) when the
    /// top level's carry a credential field (the masked names and `authentication.headerName`),
    /// its own `baseQueryItems` when the top level's carry a secret, and its own
    /// `http.tls.clientCertificateFile` and `clientKeyFile` when the top level has them; else
    /// loading it throws, naming the key to set. A service on the top level's origin (its own
    /// `timeout`, another path) inherits them all. A service with its own `http.proxy` (other than
    /// `none` and the top level's) sets its own `http.proxyCredentialService` when the top level
    /// has one.
    ///
    /// ```json
    /// { "service": "users-api", "baseURL": "https://users.internal/v1", "timeout": 10,
    ///   "services": { "billing": { "baseURL": "https://billing.internal/v2", "service": "billing-api" } } }
    /// ```
    ///
    /// ## Variables and the file's credentials
    ///
    /// A variable may be set by something other than the user who chose the file (a folder's
    /// environment file, a parent process), so one that moves where the file's credentials go, or
    /// lowers the TLS trust they are sent over, takes none of them:
    /// - a variable that lowers TLS trust (`RESOURCEFUL_HTTP_TLS_CA_FILE`, `…_CA_DIRECTORY`,
    ///   `…_TRUST_SYSTEM_ROOTS` over a file that trusts its own CA alone, `…_MINIMUM_VERSION` of
    ///   `1.2` over the file's `1.3`, `RESOURCEFUL_HTTP_DANGEROUSLY_DISABLE_CERTIFICATE_VERIFICATION`)
    ///   while the configuration names a credential (storages, a proxy login, a TLS client key, a
    ///   credential header field or secret query item) is refused, naming the variable and the
    ///   key: set the key in the file instead;
    /// - a proxy login (`http.proxyCredentialService`) goes only to a proxy the file names by URL
    ///   in `http.proxy`: `RESOURCEFUL_HTTP_PROXY` naming another is refused, and so is a proxy
    ///   login with the proxy the `https_proxy`/`http_proxy` variables name; a proxy from a
    ///   variable is refused too when a credential would cross it in clear (a plain `http` base
    ///   URL that is not loopback);
    /// - an OAuth 2 endpoint from a variable (`RESOURCEFUL_AUTHENTICATION_OAUTH2_TOKEN_ENDPOINT`,
    ///   `…_ISSUER`, `…_DEVICE_AUTHORIZATION_ENDPOINT`, `…_AUTHORIZATION_ENDPOINT`,
    ///   `…_REVOCATION_ENDPOINT`) other than the file's is refused by ResourcefulOAuth2;
    /// - a base URL from a variable (`RESOURCEFUL_BASE_URL`, `RESOURCEFUL_SERVICES_<NAME>_BASE_URL`)
    ///   on another origin than the file's own `baseURL` gets none of the file's credentials, as
    ///   on a redirect there: no credential storage, client certificate, credential header field
    ///   or secret query item (the live dependencies log a warning naming the variable);
    /// - a variable for `logging.maskedHeaders`, `logging.maskedBodyKeys` or
    ///   `http.redirects.sensitiveHeaders` adds to the file's names, never takes one off.
    ///
    /// The same value as the file's, or a stricter one, is always taken.
    ///
    /// - Parameters:
    ///   - environment: The file's name without `.json`, such as `development`.
    ///   - configDirectory: Where the files are.
    ///   - environmentVariables: The variables to read; the process environment when `nil`.
    ///   - service: The name of a service under `services` in the file, or `nil` for the top level.
    /// ## Mistakes caught
    ///
    /// The file must be standard JSON (RFC 8259): a comment, a trailing comma, single quotes,
    /// `NaN` or a key set twice is refused with its line and column. Every key, in the file
    /// (under `services.<name>` too) and in a `RESOURCEFUL_…` variable meant for a key, must be
    /// one something reads: a misspelt one (`timout`, `retry.maxAttemps`, `baseUrl`) is refused
    /// with the nearest known key (`did you mean 'timeout'?`) rather than left to its default.
    /// The keys of a storage kind another module brings (`authentication.keyring.*` read by
    /// ResourcefulKeyring, `authentication.oauth2.*` by ResourcefulOAuth2) are checked by name
    /// too; a program that does not link the module logs a warning once, when its dependencies
    /// are made, and ignores them. The keys under `authentication.<kind>` of a kind an app's own
    /// ``AuthenticationStorageFactory`` brings are left to it.
    ///
    /// A folder that was not chosen (the working directory's `Configs`, a relative
    /// `RESOURCEFUL_CONFIG_DIR`) may be a cloned repository's, whose file (or the folder itself)
    /// can be a symbolic link to any JSON file the user can read: a mistake in a file reached so
    /// is told by its line and column alone, without its keys, service names or characters.
    ///
    /// - Throws: ``APIError/Kind/invalidConfiguration`` naming the file (or the environment
    ///   variable) and the key at fault, or the service when the file does not describe it.
    public static func load(
        environment: String,
        configDirectory: String? = nil,
        environmentVariables: [String: String]? = nil,
        service: String? = nil
    ) async throws(APIError) -> APIConfig {
        let variables = environmentVariables ?? TransportEnvironment.process()
        let folder = directory(configDirectory: configDirectory, variables: variables)
        let file = Self.file(environment: environment, in: folder.path)
        // A folder found in the working directory (a cloned repository's `Configs`) can link its
        // file to any JSON file the user can read: a mistake in it is shown without its keys.
        let link = "\(folder.path)/\(environment).json"
        var config: APIConfig
        do throws(APIConfigError) {
            let showsKeys = try await folder.isChosen ? true : !offPool(file) { RegularFile.passesThroughSymbolicLink(link) }
            config = try await read(file: file, environmentVariables: variables, service: service, showsKeys: showsKeys)
        } catch {
            throw error.apiError
        }
        config.authentication.origin = FileOrigin(file: file, isChosen: folder.isChosen, note: folder.note)
        return config
    }

    /// The name of the environment variable that names the configuration folder.
    package static var directoryVariable: String { "\(environmentVariablePrefix)_CONFIG_DIR" }

    /// The folder the configuration files are read from, whether the user chose it, and why not
    /// when a variable was set but does not count as a choice.
    ///
    /// `configDirectory` (`--config-directory`) is a choice, relative or not: it is given for
    /// this run, where it is run. `RESOURCEFUL_CONFIG_DIR` is one only when absolute: a variable
    /// outlives the folder it was set in, so a relative one names whichever `Configs` the
    /// working directory holds (a cloned repository's). Empty values count as unset.
    package static func directory(configDirectory: String?, variables: [String: String]) -> (path: String, isChosen: Bool, note: String?) {
        if let configDirectory, !configDirectory.isEmpty { return (configDirectory, true, nil) }
        if let variable = variables[directoryVariable], !variable.isEmpty {
            guard variable.hasPrefix("/") else {
                return (variable, false, "\(directoryVariable) is a relative path, read from whichever folder the command runs in, so it chooses nothing: give it an absolute path")
            }
            return (variable, true, nil)
        }
        return ("Configs", false, nil)
    }

    /// Where a configuration file came from, as far as trusting it with credentials goes.
    package struct FileOrigin: Sendable, Equatable {
        /// The file read.
        package var file: String
        /// Whether its folder was chosen (a `configDirectory`, an absolute
        /// `RESOURCEFUL_CONFIG_DIR`, or the file itself), rather than found in the working
        /// directory (`Configs`, or a relative `RESOURCEFUL_CONFIG_DIR`).
        package var isChosen: Bool
        /// Why a folder the user named does not count as chosen, if that is the case.
        package var note: String? = nil
    }

    /// Refuses a configuration that names credentials (storages, a TLS client key, a proxy
    /// credential) when it was found in the working
    /// directory's `Configs` folder by default rather than chosen: a cloned repository's
    /// `Configs/` would otherwise pick a secret (a variable, a file, a keyring item, an OAuth 2
    /// client secret) and the host it is sent to. The command-line tool asks this before it makes
    /// any storage. An app's own ``APIDependencies/live(environment:configDirectory:environmentVariables:authenticationStorage:storageFactories:sharedStateFactories:service:)``
    /// is not refused: the app chooses its folder (pass `configDirectory`, or run it where its
    /// own `Configs` is).
    ///
    /// - Parameter howToChoose: What the user does to choose the folder, such as
    ///   `pass --config-directory Configs or set an absolute RESOURCEFUL_CONFIG_DIR`.
    /// - Throws: ``APIError/Kind/invalidConfiguration`` naming the file and `howToChoose`.
    package func refuseCredentialsFromUnchosenFile(howToChoose: String) throws(APIError) {
        guard let origin = authentication.origin, !origin.isChosen else { return }
        // Every way the file can make the program prove who it is: the credential storages, a
        // TLS client key, the proxy's credential.
        var kinds = authentication.storages.map(\.rawValue)
        if http.tls.clientKeyFile != nil { kinds.append("http.tls.clientKeyFile") }
        if http.proxyCredentialService != nil { kinds.append("http.proxyCredentialService") }
        guard !kinds.isEmpty else { return }
        throw APIConfigError(
            kind: .unchosenFile, file: origin.file,
            expected: "to be chosen before its credentials (\(kinds.joined(separator: ", "))) send anything to \(baseURL.host ?? "the hosts it names"): "
                + (origin.note.map { "\($0); " } ?? "") + howToChoose
        ).apiError
    }

    /// The file `load(environment:configDirectory:…)` reads.
    package static func file(environment: String, configDirectory: String?, variables: [String: String]) -> String {
        file(environment: environment, in: directory(configDirectory: configDirectory, variables: variables).path)
    }

    /// `<directory>/<environment>.json`.
    private static func file(environment: String, in directory: String) -> String {
        // `isDirectory` given: without it Foundation asks the file system, which may hang on a
        // mount that does not answer.
        URL(fileURLWithPath: directory, isDirectory: true).appendingPathComponent("\(environment).json", isDirectory: false).path
    }

    /// Loads one JSON configuration file, with environment variables overriding its keys. The
    /// file is taken as chosen by the caller.
    ///
    /// - Parameter service: The name of a service under `services` in the file, or `nil` for the
    ///   top level (see ``load(environment:configDirectory:environmentVariables:service:)``).
    /// - Throws: ``APIError/Kind/invalidConfiguration`` naming the file (or the environment
    ///   variable) and the key at fault: a value of the wrong type or out of range, a key no part
    ///   of the configuration reads (with the nearest known one), or a file that is not standard
    ///   JSON (with its line and column); see "Mistakes caught" in
    ///   ``load(environment:configDirectory:environmentVariables:service:)``.
    public static func load(
        file: String,
        environmentVariables: [String: String]? = nil,
        service: String? = nil
    ) async throws(APIError) -> APIConfig {
        do {
            return try await read(file: file, environmentVariables: environmentVariables, service: service, showsKeys: true)
        } catch {
            throw error.apiError
        }
    }

    /// The file's configuration, with the variables overriding its keys. When not `showsKeys`,
    /// a mistake found in the file's syntax or keys is told by its line and column alone: no key,
    /// no service name, no character of the file.
    private static func read(
        file: String, environmentVariables: [String: String]?, service: String?, showsKeys: Bool
    ) async throws(APIConfigError) -> APIConfig {
        // Read once, checked on the descriptor read from: a FIFO would block the read for ever,
        // and a device or a huge file never end it.
        let bytes: [UInt8]
        let read = try await offPool(file) { Result { () throws(RegularFile.Failure) in try RegularFile.contents(of: file, maximumBytes: maximumFileBytes).bytes } }
        do throws(RegularFile.Failure) {
            bytes = try read.get()
        } catch {
            switch error.reason {
            case .system(ENOENT), .system(ENOTDIR): throw APIConfigError(kind: .missingFile, file: file)
            default: throw APIConfigError(kind: .invalidFile, file: file, expected: "a regular file of at most \(maximumFileBytes) bytes")
            }
        }
        // Standard JSON only, and only keys something reads: checked before any value is, so
        // that a misspelt key (`baseUrl`) is named as such, not as the key it stood for missing.
        // What these checks report may quote the file (a key, a service name, a character).
        func unshown(_ error: APIConfigError) -> APIConfigError {
            guard !showsKeys, error.source == file else { return error }
            return APIConfigError(kind: .unshownMistake, file: file, line: error.line, column: error.column)
        }
        let json: ConfigJSON
        do {
            json = try ConfigJSONParser.parse(bytes)
        } catch {
            throw unshown(APIConfigError(kind: .notStandardJSON, file: file, expected: error.problem, line: error.line, column: error.column))
        }
        let variables = environmentVariables ?? TransportEnvironment.process()
        let otherModules: [OtherModuleKeys], services: [String]
        do {
            (otherModules, services) = try ConfigurationKeyCheck.check(json, file: file, variables: variables)
        } catch {
            throw unshown(error)
        }
        let fileProvider: JSONDataProvider
        do {
            fileProvider = try JSONDataProvider(bytes)
        } catch {
            throw APIConfigError(kind: .invalidFile, file: file)
        }
        let variablesProvider = EnvironmentVariablesProvider(environmentVariables: variables)
        let environment = variablesProvider.prefixKeys(with: ConfigKey(environmentVariablePrefix.lowercased()))
        var config: APIConfig
        if let service {
            do {
                try checkService(service, in: file, describedServices: services)
            } catch {
                throw unshown(error)
            }
            let scope = ["services", service]
            let serviceProviders: [any ConfigProvider] = [
                variablesProvider.prefixKeys(with: ConfigKey([environmentVariablePrefix.lowercased()] + scope)),
                fileProvider.prefixKeys(with: ConfigKey(scope)),
            ]
            config = try ConfigKeyReader(
                reader: ConfigReader(providers: serviceProviders + [environment, fileProvider]),
                file: file,
                variables: variables,
                service: (service, ConfigReader(providers: serviceProviders)),
                topLevel: ConfigReader(providers: [environment, fileProvider]),
                fileAlone: ConfigReader(providers: [fileProvider.prefixKeys(with: ConfigKey(scope)), fileProvider]),
                serviceFileAlone: ConfigReader(providers: [fileProvider.prefixKeys(with: ConfigKey(scope))]),
                topLevelFileAlone: ConfigReader(providers: [fileProvider])
            ).apiConfig()
        } else {
            config = try ConfigKeyReader(
                reader: ConfigReader(providers: [environment, fileProvider]), file: file, variables: variables,
                fileAlone: ConfigReader(providers: [fileProvider])
            ).apiConfig()
        }
        config.authentication.otherModules = otherModules
        return config
    }

    /// Checks that `file` describes `service` under `services`, naming those it does describe.
    private static func checkService(_ service: String, in file: String, describedServices services: [String]) throws(APIConfigError) {
        let key = "services.\(service)"
        guard !service.isEmpty, service.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw APIConfigError(kind: .invalidValue, file: file, key: key, expected: "a service name of letters, digits, - and _")
        }
        guard services.contains(service) else {
            let known = Set(services).sorted().map(ConfigJSONParser.printable)
            throw APIConfigError(
                kind: .missingKey, file: file, key: key,
                expected: known.isEmpty ? "a services object describing it" : "one of the services described: " + known.joined(separator: ", ")
            )
        }
    }
}

/// Reads and checks each key of ``APIConfig``.
struct ConfigKeyReader {
    let reader: ConfigReader
    /// The configuration file behind `reader`, if it is one the package opened.
    let file: String?
    /// The environment variables, to tell which source a bad value came from.
    let variables: [String: String]
    /// The service picked from the file's `services`, and a reader of its own keys alone: a bad
    /// value found there is named by its full key, `services.<name>.<key>`.
    var service: (name: String, reader: ConfigReader)? = nil
    /// The top level's keys alone, without the picked service's, when a service is picked.
    var topLevel: ConfigReader? = nil
    /// The file's keys alone, without the environment variables (the picked service's before
    /// the top level's), when a file is read: what the file says, for telling what a variable
    /// changed.
    var fileAlone: ConfigReader? = nil
    /// The picked service's own keys in the file alone, without the variables: what the file says
    /// the service sets itself, when a file is read and a service picked.
    var serviceFileAlone: ConfigReader? = nil
    /// The top level's keys in the file alone, when a file is read and a service picked: what a
    /// service is told apart from (its own server, login, client), whatever the variables say.
    var topLevelFileAlone: ConfigReader? = nil

    func apiConfig() throws(APIConfigError) -> APIConfig {
        let baseURL = try url("baseURL")
        guard let service = try string("service"), !service.isEmpty else {
            throw missingOrEmpty("service")
        }
        var config = APIConfig(baseURL: baseURL, service: service)
        if let lines = try stringArray("baseHeaders") { config.baseHeaders = try headers(lines, key: "baseHeaders") }
        if let items = try stringArray("baseQueryItems") { config.baseQueryItems = try queryItems(items, key: "baseQueryItems") }
        config.timeout = try seconds("timeout", allowZero: false) ?? config.timeout
        config.maxResponseBytes = try int("maxResponseBytes", in: APIConfig.Limits.maxResponseBytes, unit: "bytes") ?? config.maxResponseBytes
        // Each part's settings read their own keys.
        let root = ConfigurationKeys(reader: self, scope: "")
        try section { () throws(APIError) in
            config.coding = try APIConfig.Coding(keys: root.scoped(to: "coding"))
            config.logging = try APIConfig.LogSettings(keys: root.scoped(to: "logging"))
            config.retry = try APIConfig.RetryPolicy(keys: root.scoped(to: "retry"))
            config.http = try APIConfig.HTTPSettings(keys: root.scoped(to: "http"))
            config.cache = try APIConfig.CacheSettings(keys: root.scoped(to: "cache"))
            config.limits = try APIConfig.UpstreamLimits(keys: root.scoped(to: "limits"))
            config.authentication = try APIConfig.AuthenticationSettings(keys: root.scoped(to: "authentication"))
            config.sharedState = try APIConfig.SharedStateSettings(keys: root.scoped(to: "sharedState"))
        }
        // Whatever a key-by-key check above did not cover is refused here, by the same rules a
        // configuration built in code meets.
        if let problem = config.firstProblem() { throw invalid(problem.key, expected: problem.expected) }
        // A service on another server inherits no credential of the top level's.
        try refuseCredentialsInheritedByAnotherServer(config)
        // A variable that moves where the file's credentials go, or lowers TLS trust, takes none.
        try refuseCredentialsMovedByVariables(&config)
        return config
    }

    /// Runs `body`, which reads keys through ``ConfigurationKeys``, with its errors as this
    /// reader's.
    private func section(_ body: () throws(APIError) -> Void) throws(APIConfigError) {
        do {
            try body()
        } catch {
            // Every error ConfigurationKeys throws carries the APIConfigError it was made from.
            throw error.underlying as? APIConfigError ?? APIConfigError(kind: .invalidFile, file: file, expected: error.detail ?? "a valid configuration")
        }
    }

    /// A non-empty path.
    func path(_ key: String) throws(APIConfigError) -> String? {
        guard let path = try string(key) else { return nil }
        guard !path.isEmpty, !path.contains("\0") else { throw invalid(key, expected: "a path") }
        return path
    }

    func url(_ key: String) throws(APIConfigError) -> URL {
        guard let text = try string(key), !text.isEmpty else { throw missingOrEmpty(key) }
        guard let url = URL(string: text) else {
            throw invalid(key, expected: "an absolute http or https URL")
        }
        if let problem = APIConfig.problem(with: url) { throw invalid(key, expected: problem) }
        return url
    }

    private func queryItems(_ items: [String], key: String) throws(APIConfigError) -> [String: String] {
        var result: [String: String] = [:]
        for item in items {
            guard let equals = item.firstIndex(of: "="), equals != item.startIndex else {
                throw invalid(key, expected: "entries of the form 'name=value'")
            }
            result[String(item[..<equals])] = String(item[item.index(after: equals)...])
        }
        return result
    }

    private func headers(_ lines: [String], key: String) throws(APIConfigError) -> [String: String] {
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else {
                throw invalid(key, expected: "entries of the form 'Name: value'")
            }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            guard HeaderValidation.isValidName(name), HeaderValidation.isValidValue(value) else {
                throw invalid(key, expected: "valid header names and values without CR or LF")
            }
            headers[name] = value
        }
        return headers
    }

    func choice<T: RawRepresentable & CaseIterable>(_ key: String) throws(APIConfigError) -> T? where T.RawValue == String {
        guard let text = try string(key) else { return nil }
        guard let value = T(rawValue: text) else {
            throw invalid(key, expected: "one of " + T.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return value
    }

    /// A number of seconds, checked before it is converted (`1e300` would not fit a `Duration`).
    func seconds(_ key: String, allowZero: Bool) throws(APIConfigError) -> Duration? {
        guard let seconds = try double(key) else { return nil }
        guard seconds.isFinite, allowZero ? seconds >= 0 : seconds > 0, seconds <= APIConfig.Limits.maxSeconds else {
            throw invalid(key, expected: APIConfig.secondsExpectation(allowZero: allowZero))
        }
        let duration = Duration.milliseconds(Int64((seconds * 1000).rounded()))
        guard APIConfig.isAllowed(duration, allowZero: allowZero) else {
            throw invalid(key, expected: APIConfig.secondsExpectation(allowZero: allowZero))
        }
        return duration
    }

    /// A number within `range`, whole or not.
    func number(_ key: String, in range: ClosedRange<Double>, unit: String) throws(APIConfigError) -> Double? {
        guard let value = try double(key) else { return nil }
        guard value.isFinite, range.contains(value) else {
            throw invalid(key, expected: "a number from \(range.lowerBound) to \(range.upperBound) \(unit)")
        }
        return value
    }

    /// A whole number within `range`.
    func int(_ key: String, in range: ClosedRange<Int>, unit: String) throws(APIConfigError) -> Int? {
        guard let value = try int(key) else { return nil }
        guard range.contains(value) else { throw invalid(key, expected: APIConfig.rangeExpectation(range, unit: unit)) }
        return value
    }

    func bool(_ key: String) throws(APIConfigError) -> Bool? {
        try checked(reader.bool(forKey: ConfigKey(key)), key, type: "a boolean")
    }

    func string(_ key: String) throws(APIConfigError) -> String? {
        try checked(reader.string(forKey: ConfigKey(key)), key, type: "a string")
    }

    func stringArray(_ key: String) throws(APIConfigError) -> [String]? {
        try checked(reader.stringArray(forKey: ConfigKey(key)), key, type: "a list of strings")
    }

    func double(_ key: String) throws(APIConfigError) -> Double? {
        // A provider may hold a whole number of seconds as an integer.
        let configKey = ConfigKey(key)
        return try checked(reader.double(forKey: configKey) ?? reader.int(forKey: configKey).map(Double.init), key, type: "a number")
    }

    private func int(_ key: String) throws(APIConfigError) -> Int? {
        try checked(reader.int(forKey: ConfigKey(key)), key, type: "a whole number")
    }

    /// `value`, or a wrong-type error when it is `nil` although `key` has a value: the reader's
    /// optional getters answer `nil` both for a missing key and for a value of another type.
    private func checked<Value>(_ value: Value?, _ key: String, type: String) throws(APIConfigError) -> Value? {
        guard value == nil, isPresent(key) else { return value }
        throw APIConfigError(kind: .wrongType, file: file, key: qualified(key), source: source(of: key), expected: type)
    }

    /// Whether the picked service sets `key` itself (`services.<name>.<key>`, or its variable);
    /// `false` when no service is picked.
    func isSetByService(_ key: String) -> Bool {
        guard let service else { return false }
        return isPresent(key, in: service.reader)
    }

    /// Whether the picked service names `key` as its own: set under `services.<name>` in the file
    /// when one is read (else in the app's reader). A variable repeating the top level's credential
    /// under the service's name does not make it the service's own.
    func isOwnedByService(_ key: String) -> Bool {
        guard let service else { return false }
        return isPresent(key, in: serviceFileAlone ?? service.reader)
    }

    /// The top level's string value of `key`, ignoring the picked service — as the file writes it
    /// when one is read, so that a variable cannot make a service look like the top level's own
    /// server, login or client; `nil` when no service is picked or the top level does not set it.
    func topLevelString(_ key: String) -> String? {
        (topLevelFileAlone ?? topLevel)?.string(forKey: ConfigKey(key))
    }

    /// Whether `key`'s value comes from the configuration file the package opened, not from an
    /// environment variable (set outside the file) nor an app's own reader.
    func isReadFromFile(_ key: String) -> Bool {
        guard let file else { return false }
        return source(of: key) == file
    }

    /// `key` as written where its value is: under the picked service, or at the top level.
    func qualified(_ key: String) -> String {
        guard let service, isPresent(key, in: service.reader) else { return key }
        return "services.\(service.name).\(key)"
    }

    /// Whether `key` has a value of any type.
    private func isPresent(_ key: String) -> Bool {
        isPresent(key, in: reader)
    }

    private func isPresent(_ key: String, in reader: ConfigReader) -> Bool {
        let configKey = ConfigKey(key)
        return reader.string(forKey: configKey) != nil || reader.double(forKey: configKey) != nil
            || reader.int(forKey: configKey) != nil || reader.bool(forKey: configKey) != nil
            || reader.stringArray(forKey: configKey) != nil || reader.intArray(forKey: configKey) != nil
            || reader.doubleArray(forKey: configKey) != nil || reader.boolArray(forKey: configKey) != nil
    }

    /// Where `key`'s value comes from: its environment variable when one is set (variables
    /// override the file), else the file.
    func source(of key: String) -> String? {
        let qualifiedKey = qualified(key)
        let variable = environmentVariable(for: qualifiedKey)
        if variables[variable] != nil { return variable }
        if qualifiedKey != key { return file }
        let topLevel = environmentVariable(for: key)
        return variables[topLevel] != nil ? topLevel : file
    }

    private func missingOrEmpty(_ key: String) -> APIConfigError {
        APIConfigError(kind: .missingKey, file: file, key: key, expected: "a non-empty value")
    }

    /// The error for a bad value of `key`, naming the environment variable when one is set for
    /// it (variables override the file), else the file.
    func invalid(_ key: String, expected: String) -> APIConfigError {
        APIConfigError(kind: .invalidValue, file: file, key: qualified(key), source: source(of: key), expected: expected)
    }

    /// The environment variable that overrides `key`.
    func environmentVariable(for key: String) -> String {
        APIConfig.environmentVariable(forKey: key)
    }
}

extension APIConfig {
    /// The environment variable that overrides `key` (`retry.maxAttempts` →
    /// `RESOURCEFUL_RETRY_MAX_ATTEMPTS`), or its name after `RESOURCEFUL_` when not `prefixed`.
    static func environmentVariable(forKey key: String, prefixed: Bool = true) -> String {
        let components = key.split(separator: ".").map(String.init)
        let words = ((prefixed ? [APIConfig.environmentVariablePrefix] : []) + components).map { component in
            var result = ""
            var previous: Character?
            for character in component {
                if let previous, previous.isLowercase, character.isUppercase { result.append("_") }
                result.append(character)
                previous = character
            }
            return String(result.uppercased().map { $0.isLetter || $0.isNumber ? $0 : "_" })
        }
        return words.joined(separator: "_")
    }
}
