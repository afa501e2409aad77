public import Configuration
public import Foundation

/// The keys of one part of a configuration, such as `authentication.oauth2`, read and checked by
/// the type whose settings they are.
///
/// A storage kind made by an ``AuthenticationStorageFactory`` reads its own keys through this:
/// each getter answers `nil` for a key that is not set, and throws
/// ``APIError/Kind/invalidConfiguration`` naming the full key (`services.billing.authentication.oauth2.clientId`
/// when it is set for a service) and where its value came from (the file or the environment
/// variable) for one of the wrong type or out of range; never the value itself.
///
/// ```swift
/// let clientID = try keys.string("clientId")
/// let skew = try keys.seconds("skew", allowZero: true) ?? .seconds(60)
/// ```
public struct ConfigurationKeys: Sendable {
    let reader: ConfigKeyReader
    /// The dotted key these keys are under, such as `authentication.oauth2`; empty at the top.
    public let scope: String

    init(reader: ConfigKeyReader, scope: String) {
        self.reader = reader
        self.scope = scope
    }

    /// Reads the keys of an app's own configuration reader under `scope`.
    public init(configReader: ConfigReader, scope: String = "") {
        self.init(reader: ConfigKeyReader(reader: configReader, file: nil, variables: [:]), scope: scope)
    }

    /// No key set: the keys of a configuration built in code.
    static func empty(scope: String) -> ConfigurationKeys {
        ConfigurationKeys(configReader: ConfigReader(providers: []), scope: scope)
    }

    /// The keys under `name` (`keys.scoped(to: "privateKey")`).
    public func scoped(to name: String) -> ConfigurationKeys {
        ConfigurationKeys(reader: reader, scope: full(name))
    }

    /// `key` with this scope before it, as the file writes it.
    public func full(_ key: String) -> String {
        scope.isEmpty ? key : "\(scope).\(key)"
    }

    /// A string.
    public func string(_ key: String) throws(APIError) -> String? {
        try run { () throws(APIConfigError) in try reader.string(full(key)) }
    }

    /// A string that is not empty.
    public func nonEmptyString(_ key: String) throws(APIError) -> String? {
        guard let value = try string(key) else { return nil }
        guard !value.isEmpty, !value.contains("\0") else { throw invalid(key, expected: "a non-empty value") }
        return value
    }

    /// A list of strings (a comma-separated environment variable).
    public func stringArray(_ key: String) throws(APIError) -> [String]? {
        try run { () throws(APIConfigError) in try reader.stringArray(full(key)) }
    }

    /// A boolean.
    public func bool(_ key: String) throws(APIError) -> Bool? {
        try run { () throws(APIConfigError) in try reader.bool(full(key)) }
    }

    /// A whole number within `range`; `unit` names what it counts in the error.
    public func int(_ key: String, in range: ClosedRange<Int>, unit: String) throws(APIError) -> Int? {
        try run { () throws(APIConfigError) in try reader.int(full(key), in: range, unit: unit) }
    }

    /// A number within `range`, whole or not; `unit` names what it counts in the error.
    public func number(_ key: String, in range: ClosedRange<Double>, unit: String) throws(APIError) -> Double? {
        try run { () throws(APIConfigError) in try reader.number(full(key), in: range, unit: unit) }
    }

    /// A number of seconds (at most a day), zero allowed when `allowZero`.
    public func seconds(_ key: String, allowZero: Bool) throws(APIError) -> Duration? {
        try run { () throws(APIConfigError) in try reader.seconds(full(key), allowZero: allowZero) }
    }

    /// An absolute `http` or `https` URL without user information, query or fragment.
    public func url(_ key: String) throws(APIError) -> URL? {
        guard try string(key) != nil else { return nil }
        return try run { () throws(APIConfigError) in try reader.url(full(key)) }
    }

    /// A non-empty path.
    public func path(_ key: String) throws(APIError) -> String? {
        try run { () throws(APIConfigError) in try reader.path(full(key)) }
    }

    /// One of `T`'s raw values.
    public func choice<T: RawRepresentable & CaseIterable>(_ key: String, as type: T.Type = T.self) throws(APIError) -> T?
    where T.RawValue == String {
        try run { () throws(APIConfigError) in try reader.choice(full(key)) }
    }

    /// Whether `key` is set for the service the configuration was loaded for
    /// (`services.<name>.<scope>.<key>`), rather than inherited from the top level; `false` when
    /// the configuration was loaded without a service.
    public func isSetByService(_ key: String) -> Bool {
        reader.isSetByService(full(key))
    }

    /// Whether the service the configuration was loaded for names `key` as its own: set under
    /// `services.<name>` in the configuration file (a variable repeating the top level's value
    /// under the service's name does not count), or in an app's reader without a file.
    public func isOwnedByService(_ key: String) -> Bool {
        reader.isOwnedByService(full(key))
    }

    /// The name of the service under `services` the configuration was loaded for, or `nil`.
    public var serviceName: String? {
        reader.service?.name
    }

    /// The value the top level gives `key` (a string), ignoring the service the configuration
    /// was loaded for; `nil` when it was loaded without a service or the top level does not set it.
    public func topLevelString(_ key: String) -> String? {
        reader.topLevelString(full(key))
    }

    /// Refuses a service that talks to another server (`reason` says why) unless it sets its own
    /// top-level `service` key (`services.<name>.service`), different from the top level's: the
    /// credential storages key what they keep (a login, a refresh token, a cached token) by that
    /// value, so a shared one would send the top level's login to the service's server, and a
    /// logout of one would end the other's. Nothing is checked for a configuration loaded without
    /// a service.
    ///
    /// - Throws: ``APIError/Kind/invalidConfiguration`` naming `services.<name>.service`.
    public func requireOwnServiceKey(because reason: String) throws(APIError) {
        guard let name = serviceName else { return }
        let root = ConfigurationKeys(reader: reader, scope: "")
        let own = root.isSetByService("service") ? try root.string("service") : nil
        guard let own, !own.isEmpty, own != reader.topLevelString("service") else {
            throw APIConfigError(
                kind: own == nil ? .missingKey : .invalidValue, file: reader.file, key: "services.\(name).service",
                expected: "a service key of its own, different from the top level's, because \(reason): the login kept for the top level's service must not be sent to another server"
            ).apiError
        }
    }

    /// Why the service the configuration was loaded for is another server than the top level's
    /// (its `baseURL` on another origin, or a top level without one), or `nil` when it is not or
    /// no service was picked: such a service inherits no credential of the top level's.
    package var anotherServerReason: String? {
        guard let text = reader.topLevel == nil ? nil : reader.reader.string(forKey: ConfigKey("baseURL")), let url = URL(string: text) else { return nil }
        return reader.anotherServerReason(baseURL: url)
    }

    /// Refuses the environment variable that sets `key` to another value than the
    /// configuration file's, if one does: `reason` says what it would do with the file's
    /// credentials (a variable that moves where they go, or lowers the TLS trust they are sent
    /// over, takes none of them). Nothing is refused for a configuration read without a file.
    ///
    /// A factory of an app's own (a storage kind, a kind of shared state) calls it for each key
    /// that says where its secrets go or which one is read, as the package's own factories do:
    ///
    /// ```swift
    /// for key in ["address", "token.name"] {
    ///     try keys.refuseVariable(for: key, because: "it moves where the vault's token is sent")
    /// }
    /// ```
    ///
    /// - Throws: ``APIError/Kind/invalidConfiguration`` naming the variable and the full key,
    ///   never a value.
    public func refuseVariable(for key: String, because reason: String) throws(APIError) {
        try run { () throws(APIConfigError) in try reader.refuseVariable(for: full(key), because: reason) }
    }

    /// Whether `key`'s value was read from a configuration file the package opened, rather than
    /// from an environment variable (set outside the file) or an app's own reader.
    package func isReadFromFile(_ key: String) -> Bool {
        reader.isReadFromFile(full(key))
    }

    /// The name of the environment variable that overrides `key` where it is set (under the
    /// picked service, or at the top level), such as
    /// `RESOURCEFUL_AUTHENTICATION_ENVIRONMENT_PREFIX`.
    package func environmentVariable(for key: String) -> String {
        reader.environmentVariable(for: reader.qualified(full(key)))
    }

    /// The error for a value of `key` that was read but is not allowed: it names the full key,
    /// where the value came from, and `expected`.
    public func invalid(_ key: String, expected: String) -> APIError {
        reader.invalid(full(key), expected: expected).apiError
    }

    private func run<Value>(_ body: () throws(APIConfigError) -> Value) throws(APIError) -> Value {
        do {
            return try body()
        } catch {
            throw error.apiError
        }
    }
}
