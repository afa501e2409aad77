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
            environmentPrefix = prefix
        }
        environmentScheme = try environment.string("scheme") ?? environmentScheme
        if let name = try keys.string("headerName") {
            guard HeaderValidation.isValidName(name) else { throw keys.invalid("headerName", expected: "a valid header field name") }
            headerName = name
        }
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
