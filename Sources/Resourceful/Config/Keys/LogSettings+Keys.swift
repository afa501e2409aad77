import Logging

extension APIConfig.LogSettings {
    /// The settings under `keys` (`logging`): `level`, `maskedHeaders`, `maskedBodyKeys` and
    /// `maxBodyBytes`, checked; the defaults for those not set.
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
        maskedHeaders = try keys.stringArray("maskedHeaders") ?? maskedHeaders
        maskedBodyKeys = try keys.stringArray("maskedBodyKeys") ?? maskedBodyKeys
        maxBodyBytes = try keys.int("maxBodyBytes", in: APIConfig.Limits.maxLoggedBodyBytes, unit: "bytes") ?? maxBodyBytes
    }
}
