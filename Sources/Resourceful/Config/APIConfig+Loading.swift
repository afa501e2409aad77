import Foundation
import Configuration
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

    /// The prefix of environment variables that override configuration keys.
    package static let environmentVariablePrefix = "RESOURCEFUL"

    /// Loads `<configDirectory>/<environment>.json`, with environment variables overriding its keys.
    ///
    /// The directory is `configDirectory` if given, else the `RESOURCEFUL_CONFIG_DIR` environment
    /// variable, else `Configs` in the current directory. A key such as `logging.level` is
    /// overridden by `RESOURCEFUL_LOGGING_LEVEL` (camel case split at word boundaries:
    /// `baseURL` → `RESOURCEFUL_BASE_URL`); lists are comma-separated. The keys are listed in
    /// <doc:Configuration>.
    ///
    /// - Parameters:
    ///   - environment: The file's name without `.json`, such as `development`.
    ///   - configDirectory: Where the files are.
    ///   - environmentVariables: The variables to read; the process environment when `nil`.
    /// - Throws: ``APIConfigError`` naming the file and the key at fault.
    public static func load(
        environment: String,
        configDirectory: String? = nil,
        environmentVariables: [String: String]? = nil
    ) async throws(APIConfigError) -> APIConfig {
        let variables = environmentVariables ?? ProcessInfo.processInfo.environment
        let directory = configDirectory ?? variables["\(environmentVariablePrefix)_CONFIG_DIR"] ?? "Configs"
        let file = URL(fileURLWithPath: directory).appendingPathComponent("\(environment).json").path
        return try await load(file: file, environmentVariables: variables)
    }

    /// Loads one JSON configuration file, with environment variables overriding its keys.
    ///
    /// - Throws: ``APIConfigError`` naming the file and the key at fault.
    public static func load(
        file: String,
        environmentVariables: [String: String]? = nil
    ) async throws(APIConfigError) -> APIConfig {
        guard FileManager.default.fileExists(atPath: file) else {
            throw APIConfigError(kind: .missingFile, file: file)
        }
        // A FIFO would block the read for ever, and a device or a huge file never end it.
        var status = stat()
        guard stat(file, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size <= maximumFileBytes else {
            throw APIConfigError(kind: .invalidFile, file: file, expected: "a regular file of at most \(maximumFileBytes) bytes")
        }
        let fileProvider: FileProvider<JSONSnapshot>
        do {
            fileProvider = try await FileProvider<JSONSnapshot>(filePath: FilePath(file))
        } catch {
            throw APIConfigError(kind: .invalidFile, file: file)
        }
        let environment = EnvironmentVariablesProvider(
            environmentVariables: environmentVariables ?? ProcessInfo.processInfo.environment
        ).prefixKeys(with: ConfigKey(environmentVariablePrefix.lowercased()))
        let reporter = ConfigProblemReporter()
        let reader = ConfigReader(providers: [environment, fileProvider], accessReporter: reporter)
        let keys = ConfigKeyReader(
            reader: reader,
            reporter: reporter,
            file: file,
            variables: environmentVariables ?? ProcessInfo.processInfo.environment
        )
        return try keys.apiConfig()
    }
}

/// Reads and checks each key of ``APIConfig``.
struct ConfigKeyReader {
    let reader: ConfigReader
    let reporter: ConfigProblemReporter
    let file: String
    /// The environment variables, to tell which source a bad value came from.
    let variables: [String: String]

    func apiConfig() throws(APIConfigError) -> APIConfig {
        let defaults = APIConfig.LogSettings()
        let baseURL = try url("baseURL")
        guard let service = try string("service"), !service.isEmpty else {
            throw missingOrEmpty("service")
        }
        var config = APIConfig(baseURL: baseURL, service: service)
        if let lines = try stringArray("baseHeaders") { config.baseHeaders = try headers(lines, key: "baseHeaders") }
        config.timeout = try seconds("timeout", allowZero: false) ?? config.timeout
        config.maxResponseBytes = try int("maxResponseBytes", in: APIConfig.Limits.maxResponseBytes, unit: "bytes") ?? config.maxResponseBytes
        config.coding.keyStrategy = try choice("coding.keyStrategy") ?? config.coding.keyStrategy
        config.coding.dateStrategy = try choice("coding.dateStrategy") ?? config.coding.dateStrategy
        config.coding.decoder = try choice("coding.decoder") ?? config.coding.decoder
        config.coding.arrayFormat = try choice("coding.arrayFormat") ?? config.coding.arrayFormat
        if let level = try string("logging.level") {
            guard let parsed = Logger.Level(rawValue: level) else {
                throw invalid("logging.level", expected: "one of " + Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))
            }
            config.logging.level = parsed
        }
        config.logging.maskedHeaders = try stringArray("logging.maskedHeaders") ?? defaults.maskedHeaders
        config.logging.maskedBodyKeys = try stringArray("logging.maskedBodyKeys") ?? defaults.maskedBodyKeys
        config.logging.maxBodyBytes =
            try int("logging.maxBodyBytes", in: APIConfig.Limits.maxLoggedBodyBytes, unit: "bytes") ?? config.logging.maxBodyBytes
        config.retry.maxAttempts = try int("retry.maxAttempts", in: APIConfig.Limits.maxAttempts, unit: "attempts") ?? config.retry.maxAttempts
        config.retry.baseDelay = try seconds("retry.baseDelay", allowZero: true) ?? config.retry.baseDelay
        config.retry.maxDelay = try seconds("retry.maxDelay", allowZero: true) ?? config.retry.maxDelay
        if let statuses = try stringArray("retry.retryableStatuses") {
            let codes = statuses.compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }.filter(APIConfig.Limits.statuses.contains)
            guard codes.count == statuses.count else { throw invalid("retry.retryableStatuses", expected: "HTTP status codes") }
            config.retry.retryableStatuses = Set(codes)
        }
        config.http.maximumConnectionsPerHost =
            try int("http.maximumConnectionsPerHost", in: APIConfig.Limits.connectionsPerHost, unit: "connections")
            ?? config.http.maximumConnectionsPerHost
        config.http.connectTimeout = try seconds("http.connectTimeout", allowZero: false) ?? config.http.connectTimeout
        config.http.maxRedirects = try int("http.maxRedirects", in: APIConfig.Limits.maxRedirects, unit: "redirects") ?? config.http.maxRedirects
        if let names = try stringArray("http.redirects.sensitiveHeaders") {
            guard names.allSatisfy(HeaderValidation.isValidName) else {
                throw invalid("http.redirects.sensitiveHeaders", expected: "header names")
            }
            config.http.sensitiveRedirectHeaders = names
        }
        config.http.decompression = try bool("http.decompression") ?? config.http.decompression
        config.http.maxDecompressionRatio =
            try int("http.maxDecompressionRatio", in: APIConfig.Limits.decompressionRatio, unit: "as a ratio")
            ?? config.http.maxDecompressionRatio
        if let insecure = try bool("http.dangerouslyDisableCertificateVerification") {
            config.http.dangerouslyDisableCertificateVerification = insecure
        }
        config.authentication = try authentication()
        // Whatever a key-by-key check above did not cover is refused here, by the same rules a
        // configuration built in code meets.
        if let problem = config.firstProblem() { throw invalid(problem.key, expected: problem.expected) }
        return config
    }

    private func authentication() throws(APIConfigError) -> APIConfig.AuthenticationSettings {
        var settings = APIConfig.AuthenticationSettings()
        if let names = try stringArray("authentication.storages") {
            settings.storages = try storageKinds(names, key: "authentication.storages")
            guard Set(settings.storages).count == settings.storages.count else {
                throw invalid("authentication.storages", expected: "each storage once")
            }
        }
        if let names = try stringArray("authentication.optional") {
            settings.optional = Set(try storageKinds(names, key: "authentication.optional"))
        }
        if let directory = try string("authentication.file.directory") {
            guard directory.hasPrefix("/") else { throw invalid("authentication.file.directory", expected: "an absolute path") }
            settings.fileDirectory = directory
        }
        if let scheme = try string("authentication.file.scheme") { settings.fileScheme = scheme }
        settings.fileRefreshInterval = try seconds("authentication.file.refreshInterval", allowZero: true) ?? settings.fileRefreshInterval
        if let prefix = try string("authentication.environment.prefix") {
            guard !prefix.isEmpty else { throw invalid("authentication.environment.prefix", expected: "a non-empty prefix") }
            settings.environmentPrefix = prefix
        }
        if let scheme = try string("authentication.environment.scheme") { settings.environmentScheme = scheme }
        if let account = try string("authentication.keyring.account") {
            guard !account.isEmpty else { throw invalid("authentication.keyring.account", expected: "a non-empty account name") }
            settings.keyringAccount = account
        }
        if let scheme = try string("authentication.keyring.scheme") { settings.keyringScheme = scheme }
        return settings
    }

    private func storageKinds(_ names: [String], key: String) throws(APIConfigError) -> [APIConfig.StorageKind] {
        var kinds: [APIConfig.StorageKind] = []
        for name in names {
            guard let kind = APIConfig.StorageKind(rawValue: name) else {
                throw invalid(key, expected: "storages among " + APIConfig.StorageKind.allCases.map(\.rawValue).joined(separator: ", "))
            }
            kinds.append(kind)
        }
        return kinds
    }

    private func url(_ key: String) throws(APIConfigError) -> URL {
        guard let text = try string(key), !text.isEmpty else { throw missingOrEmpty(key) }
        guard let url = URL(string: text) else {
            throw invalid(key, expected: "an absolute http or https URL")
        }
        if let problem = APIConfig.problem(with: url) { throw invalid(key, expected: problem) }
        return url
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

    private func choice<T: RawRepresentable & CaseIterable>(_ key: String) throws(APIConfigError) -> T? where T.RawValue == String {
        guard let text = try string(key) else { return nil }
        guard let value = T(rawValue: text) else {
            throw invalid(key, expected: "one of " + T.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return value
    }

    /// A number of seconds, checked before it is converted (`1e300` would not fit a `Duration`).
    private func seconds(_ key: String, allowZero: Bool) throws(APIConfigError) -> Duration? {
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

    /// A whole number within `range`.
    private func int(_ key: String, in range: ClosedRange<Int>, unit: String) throws(APIConfigError) -> Int? {
        guard let value = try int(key) else { return nil }
        guard range.contains(value) else { throw invalid(key, expected: APIConfig.rangeExpectation(range, unit: unit)) }
        return value
    }

    private func bool(_ key: String) throws(APIConfigError) -> Bool? {
        let value = reader.bool(forKey: ConfigKey(key))
        try check(key)
        return value
    }

    private func string(_ key: String) throws(APIConfigError) -> String? {
        let value = reader.string(forKey: ConfigKey(key))
        try check(key)
        return value
    }

    private func stringArray(_ key: String) throws(APIConfigError) -> [String]? {
        let value = reader.stringArray(forKey: ConfigKey(key))
        try check(key)
        return value
    }

    private func double(_ key: String) throws(APIConfigError) -> Double? {
        let value = reader.double(forKey: ConfigKey(key))
        try check(key)
        return value
    }

    private func int(_ key: String) throws(APIConfigError) -> Int? {
        let value = reader.int(forKey: ConfigKey(key))
        try check(key)
        return value
    }

    /// Turns a lookup or conversion failure the reporter saw for `key` into a wrong-type error.
    private func check(_ key: String) throws(APIConfigError) {
        guard let problem = reporter.takeProblem(for: key) else { return }
        let source = problem.fromEnvironment ? environmentVariable(for: key) : file
        throw APIConfigError(kind: .wrongType, file: file, key: key, source: source, expected: problem.expectedType)
    }

    private func missingOrEmpty(_ key: String) -> APIConfigError {
        APIConfigError(kind: .missingKey, file: file, key: key, expected: "a non-empty value")
    }

    /// The error for a bad value of `key`, naming the environment variable when one is set for
    /// it (variables override the file), else the file.
    private func invalid(_ key: String, expected: String) -> APIConfigError {
        let variable = environmentVariable(for: key)
        let source = variables[variable] != nil ? variable : file
        return APIConfigError(kind: .invalidValue, file: file, key: key, source: source, expected: expected)
    }

    /// The environment variable that overrides `key`.
    func environmentVariable(for key: String) -> String {
        let words = ([APIConfig.environmentVariablePrefix] + key.split(separator: ".").map(String.init)).map { component in
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
