extension APIConfig.Coding {
    /// The settings under `keys` (`coding`): `keyStrategy`, `dateStrategy`, `decoder` and
    /// `arrayFormat`, checked; the defaults for those not set.
    ///
    /// - Throws: ``APIError/Kind/invalidConfiguration`` naming the key at fault.
    public init(keys: ConfigurationKeys) throws(APIError) {
        self.init()
        keyStrategy = try keys.choice("keyStrategy") ?? keyStrategy
        dateStrategy = try keys.choice("dateStrategy") ?? dateStrategy
        decoder = try keys.choice("decoder") ?? decoder
        arrayFormat = try keys.choice("arrayFormat") ?? arrayFormat
    }
}

extension APIConfig.CacheSettings {
    /// The settings under `keys` (`cache`): `storesAuthorizedResponses`.
    ///
    /// - Throws: ``APIError/Kind/invalidConfiguration`` naming the key at fault.
    public init(keys: ConfigurationKeys) throws(APIError) {
        self.init(storesAuthorizedResponses: try keys.bool("storesAuthorizedResponses") ?? false)
    }
}
