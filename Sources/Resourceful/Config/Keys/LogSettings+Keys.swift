import Configuration
import Logging

extension APIConfig.LogSettings {
    /// The settings under `keys` (`logging`): `level`, `maskedHeaders`, `maskedBodyKeys` and
    /// `maxBodyBytes`, checked; the defaults for those not set. A service's `maskedHeaders` and
    /// `maskedBodyKeys` add to the top level's, and never take a name off them: a name the top
    /// level masks stays masked in the service's logs, recordings and cURL exports.
    ///
    /// - Throws: ``APIError/Kind/invalidConfiguration`` naming the key at fault.
    public init(keys: ConfigurationKeys) throws(APIError) {
        self.init()
        if let level = try keys.string("level") {
            guard let parsed = Logger.Level(rawValue: level) else {
                throw keys.invalid("level", expected: "one of " + Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))
            }
            self.level = parsed
        }
        maskedHeaders = try keys.stringArray("maskedHeaders").map { keys.addingTopLevelNames($0, of: "maskedHeaders") } ?? maskedHeaders
        maskedBodyKeys = try keys.stringArray("maskedBodyKeys").map { keys.addingTopLevelNames($0, of: "maskedBodyKeys") } ?? maskedBodyKeys
        maxBodyBytes = try keys.int("maxBodyBytes", in: APIConfig.Limits.maxLoggedBodyBytes, unit: "bytes") ?? maxBodyBytes
    }
}

extension ConfigurationKeys {
    /// `names`, the list a service sets for `key` (names kept masked or off a redirect), with the
    /// top level's own list for the same key added (each name once, whatever its case): a service
    /// adds to the names the top level protects and never takes one off. `names` as they are when
    /// the configuration was loaded without a service or the service does not set `key`.
    func addingTopLevelNames(_ names: [String], of key: String) -> [String] {
        guard isSetByService(key), let inherited = reader.topLevel?.stringArray(forKey: ConfigKey(full(key))) else { return names }
        let present = Set(names.map { $0.lowercased() })
        return names + inherited.filter { !present.contains($0.lowercased()) }
    }
}
