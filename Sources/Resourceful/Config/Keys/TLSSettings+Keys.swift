import Configuration

extension APIConfig.TLSSettings {
    /// The settings under `keys` (`http.tls`): `caFile`, `caDirectory`, `trustSystemRoots`,
    /// `clientCertificateFile`, `clientKeyFile` and `minimumVersion`, checked; the defaults for
    /// those not set.
    ///
    /// - Throws: ``APIError/Kind/invalidConfiguration`` naming the key at fault.
    public init(keys: ConfigurationKeys) throws(APIError) {
        self.init()
        caFile = try keys.path("caFile")
        caDirectory = try keys.path("caDirectory")
        trustSystemRoots = try keys.bool("trustSystemRoots") ?? trustSystemRoots
        clientCertificateFile = try keys.path("clientCertificateFile")
        clientKeyFile = try keys.path("clientKeyFile")
        if (clientCertificateFile == nil) != (clientKeyFile == nil) {
            throw keys.invalid(clientKeyFile == nil ? "clientKeyFile" : "clientCertificateFile", expected: "a client certificate and its key together")
        }
        // `1.3` may be written as a number as well as text.
        var written = keys.reader.reader.double(forKey: ConfigKey(keys.full("minimumVersion"))).map { "\($0)" }
        if written == nil { written = try keys.string("minimumVersion") }
        if let version = written {
            guard let parsed = APIConfig.TLSVersion(rawValue: version) else {
                throw keys.invalid("minimumVersion", expected: "1.2 or 1.3")
            }
            minimumVersion = parsed
        }
    }
}
