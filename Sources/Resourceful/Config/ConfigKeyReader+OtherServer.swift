import Configuration
import Foundation

extension ConfigKeyReader {
    /// Refuses a picked service that talks to another server than the top level's but would use
    /// the top level's credential there.
    ///
    /// A service whose `baseURL` (from `services.<name>.baseURL` or its
    /// `RESOURCEFUL_SERVICES_<NAME>_BASE_URL` variable) is on another origin than the top level's
    /// (or whose top level has no `baseURL`) is another server: it inherits no credential. It
    /// must name its own `service` (the key every credential storage looks its credential up by,
    /// different from the top level's), its own `baseHeaders` when the top level's hold a
    /// credential field, its own `baseQueryItems` when the top level's hold a secret, and its
    /// own client certificate when the top level has one. A service on the top level's origin
    /// (a `timeout` of its own, another path) inherits everything. Whatever the origin, a service
    /// that sends its requests through another proxy names its own `http.proxyCredentialService`.
    ///
    /// - Throws: ``APIConfigError`` naming the service's key to set and why; never a value.
    func refuseCredentialsInheritedByAnotherServer(_ config: APIConfig) throws(APIConfigError) {
        guard let service else { return }
        let prefix = "services.\(service.name)."
        try refuseProxyCredentialInheritedByAnotherProxy(config, prefix: prefix)
        guard let reason = anotherServerReason(baseURL: config.baseURL) else { return }

        // The login: every storage, the app's own included, looks the credential up by `service`.
        do {
            try ConfigurationKeys(reader: self, scope: "").requireOwnServiceKey(because: reason)
        } catch {
            throw error.underlying as? APIConfigError ?? APIConfigError(kind: .invalidValue, file: file, key: prefix + "service")
        }
        // The names the top level masks count too, as the file writes them: neither a service's
        // own masking rules nor a variable can make the top level's credential field an ordinary one.
        let topLevelNames = ["logging.maskedHeaders", "logging.maskedBodyKeys"].flatMap { (topLevelFileAlone ?? topLevel)?.stringArray(forKey: ConfigKey($0)) ?? [] }
            + [topLevelString("authentication.headerName")].compactMap { $0 }
        let settings = config.redaction
        let names = SensitiveNames(extra: settings.maskedHeaders + settings.maskedBodyKeys + topLevelNames)
        if !isOwnedByService("baseHeaders"), let name = config.baseHeaders.keys.sorted().first(where: { names.isSensitiveHeader($0) }) {
            throw APIConfigError(
                kind: .missingKey, file: file, key: prefix + "baseHeaders",
                expected: "a list of its own ([] for none), because \(reason): the top level's carries a credential (\(ConfigJSONParser.printable(name))) that must not be sent there"
            )
        }
        if !isOwnedByService("baseQueryItems"), let name = config.baseQueryItems.keys.sorted().first(where: { names.contains($0) }) {
            throw APIConfigError(
                kind: .missingKey, file: file, key: prefix + "baseQueryItems",
                expected: "a list of its own ([] for none), because \(reason): the top level's carries a secret (\(ConfigJSONParser.printable(name))) that must not be sent there"
            )
        }
        if config.http.tls.clientCertificateFile != nil,
            !isOwnedByService("http.tls.clientCertificateFile") || !isOwnedByService("http.tls.clientKeyFile")
        {
            throw APIConfigError(
                kind: .missingKey, file: file, key: prefix + "http.tls.clientCertificateFile",
                expected: "a client certificate and key of its own, because \(reason): the top level's must not prove who it is there (set it under the services that use it instead)"
            )
        }
    }

    /// Why the picked service is another server than the top level's, or `nil` when it is not
    /// (or no service is picked): its `baseURL` (its key or its variable), here `baseURL`, is on
    /// another origin than the top level's, or the top level has none. Such a service inherits
    /// no credential of the top level's: this rule is the one every part of the configuration
    /// (the OAuth 2 client's among them) asks.
    func anotherServerReason(baseURL: URL) -> String? {
        guard let service, isSetByService("baseURL") else { return nil }
        let topLevelURL = topLevelString("baseURL").flatMap { URL(string: $0) }
        if let topLevelURL, Origin.same(topLevelURL, baseURL) { return nil }
        let server = Origin(baseURL)?.description ?? "another server"
        return "its baseURL (services.\(service.name).baseURL) is another server (\(server)) than the top level's"
    }

    /// Refuses a service that sends its requests through a proxy of its own (`http.proxy` set
    /// for it, not `none`, other than the top level's) with the top level's proxy credential.
    private func refuseProxyCredentialInheritedByAnotherProxy(_ config: APIConfig, prefix: String) throws(APIConfigError) {
        guard config.http.proxyCredentialService != nil, config.http.proxy != .none,
            isSetByService("http.proxy"), !isOwnedByService("http.proxyCredentialService"),
            let own = try string("http.proxy"), own != topLevelString("http.proxy")
        else { return }
        throw APIConfigError(
            kind: .missingKey, file: file, key: prefix + "http.proxyCredentialService",
            expected: "a proxy credential of its own, because its proxy (\(prefix)http.proxy) is another server than the top level's: the top level's proxy login must not be sent there"
        )
    }
}
