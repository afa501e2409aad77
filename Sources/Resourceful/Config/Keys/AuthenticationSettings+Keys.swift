extension APIConfig.AuthenticationSettings {
    /// The settings under `keys` (`authentication`): the storages, which of them are optional,
    /// the `file` and `environment` storages' keys, and `headerName`, checked. The keys of kinds
    /// other modules bring (`keyring`, `oauth2`, an app's own) are kept in ``keys`` for their
    /// factories to read.
    ///
    /// - Throws: ``APIError/Kind/invalidConfiguration`` naming the key at fault.
    public init(keys: ConfigurationKeys) throws(APIError) {
        self.init()
        self.keys = keys
        if let names = try keys.stringArray("storages") {
            storages = try Self.storageKinds(names, key: "storages", keys: keys)
            guard Set(storages).count == storages.count else { throw keys.invalid("storages", expected: "each storage once") }
        }
        if let names = try keys.stringArray("optional") {
            optional = Set(try Self.storageKinds(names, key: "optional", keys: keys))
            guard optional.isSubset(of: storages) else {
                throw keys.invalid("optional", expected: "storages that authentication.storages lists")
            }
        }
        let file = keys.scoped(to: "file")
        if let directory = try file.string("directory") {
            guard directory.hasPrefix("/") else { throw file.invalid("directory", expected: "an absolute path") }
            fileDirectory = directory
        }
        fileScheme = try file.string("scheme") ?? fileScheme
        fileRefreshInterval = try file.seconds("refreshInterval", allowZero: true) ?? fileRefreshInterval
        let environment = keys.scoped(to: "environment")
        if let prefix = try environment.string("prefix") {
            guard !prefix.isEmpty else { throw environment.invalid("prefix", expected: "a non-empty prefix") }
            // A file must not pick any variable of the process (`GITHUB` and a name `token` would
            // send GITHUB_TOKEN to the host the file names): from a file, the prefix stays in
            // the storage's own namespace; another is set outside it, by its variable.
            if environment.isReadFromFile("prefix"), !Self.isOwnEnvironmentPrefix(prefix) {
                throw environment.invalid(
                    "prefix",
                    expected: "\(Self.ownEnvironmentPrefix) or a prefix starting with \(Self.ownEnvironmentPrefix)_ (a configuration file cannot choose other variables; set \(environment.environmentVariable(for: "prefix")) outside it for another prefix)"
                )
            }
            environmentPrefix = prefix
        }
        environmentScheme = try environment.string("scheme") ?? environmentScheme
        if let name = try keys.string("headerName") {
            guard HeaderValidation.isValidName(name) else { throw keys.invalid("headerName", expected: "a valid header field name") }
            headerName = name
        }
    }

    /// The `environment` storage's own namespace: `RESOURCEFUL_AUTH`.
    package static let ownEnvironmentPrefix = "RESOURCEFUL_AUTH"

    /// Whether `prefix` keeps the `environment` storage to its own variables: `RESOURCEFUL_AUTH`
    /// or `RESOURCEFUL_AUTH_<more>`.
    package static func isOwnEnvironmentPrefix(_ prefix: String) -> Bool {
        prefix == ownEnvironmentPrefix || prefix.hasPrefix(ownEnvironmentPrefix + "_")
    }

    /// Which kinds are known is up to the storage factories the dependencies are made with: only
    /// the names are checked here.
    private static func storageKinds(_ names: [String], key: String, keys: ConfigurationKeys) throws(APIError) -> [APIConfig.StorageKind] {
        guard names.allSatisfy(APIConfig.StorageKind.isValidName) else {
            throw keys.invalid(key, expected: "storage kinds such as file, environment, keyring or oauth2 (letters, digits, - and _)")
        }
        return names.map(APIConfig.StorageKind.init(rawValue:))
    }
}
