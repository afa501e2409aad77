import Configuration
import Foundation

extension ConfigKeyReader {
    /// The keys whose variable lowers the TLS trust a call is made with.
    static let trustKeys = [
        "http.dangerouslyDisableCertificateVerification", "http.tls.caFile", "http.tls.caDirectory",
        "http.tls.trustSystemRoots", "http.tls.minimumVersion",
    ]

    /// Applies the rule for environment variables over a configuration file: a variable may be
    /// set by something other than the user who chose the file (a folder's environment file, a
    /// parent process), so one that moves where the file's credentials go, or lowers the TLS
    /// trust they are sent over, takes none of them.
    ///
    /// - A variable that lowers TLS trust (a CA file or folder other than the file's, system roots
    ///   trusted where the file trusts its own CA alone, TLS 1.2 where the file asks for 1.3,
    ///   certificate verification turned off) while the configuration names a credential is
    ///   refused, naming the variable and the key: set the key in the file instead.
    /// - A variable that names a proxy other than the file's (`RESOURCEFUL_HTTP_PROXY`) is refused
    ///   when the proxy login (`http.proxyCredentialService`) would go to it, or the API's
    ///   credential would cross it in clear (a plain `http` base URL that is not loopback). A
    ///   proxy login goes to a proxy the file names by URL only: not to the one the `https_proxy`
    ///   and `http_proxy` variables name (`http.proxy` of `environment`, the default).
    /// - A base URL from a variable on another origin than the file's own `baseURL` (the picked
    ///   service's, else the top level's) gets none of the file's credentials, as on a redirect
    ///   there: no credential storage, TLS client certificate, credential header field or secret
    ///   query item. A file without a `baseURL` leaves it to the variables.
    /// - A variable for a list of masked or redirect-sensitive names (`logging.maskedHeaders`,
    ///   `logging.maskedBodyKeys`, `http.redirects.sensitiveHeaders`) adds to the file's list.
    ///
    /// Nothing is checked for a configuration read without a file (an app's reader, or variables
    /// alone): there the program, or the variables, chose everything.
    ///
    /// - Throws: ``APIConfigError`` of kind ``APIConfigError/Kind/movedByVariable`` naming the
    ///   variable and the key; never a value.
    func refuseCredentialsMovedByVariables(_ config: inout APIConfig) throws(APIConfigError) {
        guard file != nil, fileAlone != nil else { return }
        // First what a moved base URL leaves out: what is left is what the other checks guard.
        withholdCredentialsFromMovedBaseURL(&config)
        let credentials = credentialKeys(config)
        if !credentials.isEmpty {
            for key in Self.trustKeys where lowersTrust(key, config: config) {
                try refuseVariable(
                    for: key,
                    because: "it lowers the TLS trust that the file's credentials (\(credentials.joined(separator: ", "))) are sent over"
                )
            }
        }
        try refuseProxyMovedByVariable(config)
        keepTheFilesProtectedNames(&config)
    }

    /// The lists of names that keep a credential masked in logs and off a redirect to another
    /// origin: a variable adds to the file's, and never takes a name off it (an empty
    /// `RESOURCEFUL_LOGGING_MASKED_HEADERS` would otherwise log the file's own credential field in
    /// clear, and let it follow a redirect).
    private func keepTheFilesProtectedNames(_ config: inout APIConfig) {
        func merged(_ key: String, _ current: [String]) -> [String] {
            guard let source = source(of: key), source != file, let own = fileAlone?.stringArray(forKey: ConfigKey(key)) else { return current }
            let present = Set(current.map { $0.lowercased() })
            return current + own.filter { !present.contains($0.lowercased()) }
        }
        config.logging.maskedHeaders = merged("logging.maskedHeaders", config.logging.maskedHeaders)
        config.logging.maskedBodyKeys = merged("logging.maskedBodyKeys", config.logging.maskedBodyKeys)
        config.http.sensitiveRedirectHeaders = merged("http.redirects.sensitiveHeaders", config.http.sensitiveRedirectHeaders)
    }

    /// The environment variable that sets `key` to a value other than the file's, or `nil` when
    /// the value is the file's (or no file was read).
    func movingVariable(for key: String) -> String? {
        guard let fileAlone, let source = source(of: key), source != file else { return nil }
        let configKey = ConfigKey(key)
        let effective = reader.string(forKey: configKey) ?? reader.bool(forKey: configKey).map(String.init)
            ?? reader.double(forKey: configKey).map { "\($0)" }
        let own = fileAlone.string(forKey: configKey) ?? fileAlone.bool(forKey: configKey).map(String.init)
            ?? fileAlone.double(forKey: configKey).map { "\($0)" }
        return effective == own ? nil : source
    }

    /// Refuses the variable that changes `key` from the file's value, if one does, saying why it
    /// may not and what to do instead.
    ///
    /// - Throws: ``APIConfigError`` of kind ``APIConfigError/Kind/movedByVariable``.
    func refuseVariable(for key: String, because reason: String) throws(APIConfigError) {
        guard let variable = movingVariable(for: key) else { return }
        throw APIConfigError(
            kind: .movedByVariable, file: file, key: qualified(key), source: variable,
            expected: "no such variable, because \(reason): a variable may be set by something other than the user who chose the file; set \(qualified(key)) in the file instead, or unset \(variable)"
        )
    }

    /// The keys of `config` that make the program prove who it is: its credential storages,
    /// its proxy login, its TLS client key, a base header field or query item that carries a
    /// credential.
    func credentialKeys(_ config: APIConfig) -> [String] {
        var keys: [String] = []
        if !config.authentication.storages.isEmpty { keys.append(qualified("authentication.storages")) }
        if config.http.proxyCredentialService != nil { keys.append(qualified("http.proxyCredentialService")) }
        if config.http.tls.clientKeyFile != nil { keys.append(qualified("http.tls.clientKeyFile")) }
        let names = sensitiveNames(config)
        if config.baseHeaders.keys.contains(where: names.isSensitiveHeader) { keys.append(qualified("baseHeaders")) }
        if config.baseQueryItems.keys.contains(where: names.contains) { keys.append(qualified("baseQueryItems")) }
        return keys
    }

    /// The names masked as credentials: the built-in ones, the configuration's, and the file's
    /// own (a variable cannot make the file's credential field an ordinary one).
    private func sensitiveNames(_ config: APIConfig) -> SensitiveNames {
        let fileNames = ["logging.maskedHeaders", "logging.maskedBodyKeys"].flatMap { fileAlone?.stringArray(forKey: ConfigKey($0)) ?? [] }
            + [fileAlone?.string(forKey: ConfigKey("authentication.headerName"))].compactMap { $0 }
        let settings = config.redaction
        return SensitiveNames(extra: settings.maskedHeaders + settings.maskedBodyKeys + fileNames)
    }

    /// Whether a variable sets `key` (one of ``trustKeys``) so that fewer certificates are
    /// checked, or more are trusted, than the file asks for.
    private func lowersTrust(_ key: String, config: APIConfig) -> Bool {
        guard movingVariable(for: key) != nil, let fileAlone else { return false }
        let own = ConfigKey(key)
        let tls = config.http.tls
        switch key {
        case "http.dangerouslyDisableCertificateVerification": return config.http.dangerouslyDisableCertificateVerification
        case "http.tls.caFile": return tls.caFile != nil
        case "http.tls.caDirectory": return tls.caDirectory != nil
        // Trusting the system's roots where the file trusts its own CA alone.
        case "http.tls.trustSystemRoots": return tls.trustSystemRoots && fileAlone.bool(forKey: own) == false
        case "http.tls.minimumVersion":
            let written = fileAlone.string(forKey: own) ?? fileAlone.double(forKey: own).map { "\($0)" }
            return tls.minimumVersion == .v1_2 && written == APIConfig.TLSVersion.v1_3.rawValue
        default: return true
        }
    }

    /// Refuses a proxy a variable names when a credential would reach it: the proxy login, or
    /// the API's credential over plain http to a host that is not this machine. A proxy login is
    /// given to a proxy the file names by URL alone.
    private func refuseProxyMovedByVariable(_ config: APIConfig) throws(APIConfigError) {
        guard config.http.proxy != .none else { return }
        let proxyLogin = config.http.proxyCredentialService != nil
        let key = "http.proxy"
        if proxyLogin {
            try refuseVariable(for: key, because: "the proxy login (\(qualified("http.proxyCredentialService"))) would be sent to the proxy it names")
            if config.http.proxy == .environment {
                throw invalid(
                    "http.proxyCredentialService",
                    expected: "a proxy the file names by URL in \(qualified(key)) (http://host:port) for the proxy login to be sent to: the proxy the https_proxy or http_proxy variables name may be set by something other than the user who chose the file"
                )
            }
        }
        // Loopback targets never go through a proxy, whatever names it.
        let plain = config.baseURL.scheme?.lowercased() == "http" && ProxyRoute.Target(config.baseURL)?.isLoopback == false
        if plain, !credentialKeys(config).isEmpty {
            try refuseVariable(for: key, because: "the API's credential would cross the proxy it names in clear (the base URL is plain http)")
        }
    }

    /// Leaves out the file's credentials when a variable moved the base URL to another origin
    /// than the file's own, noting which variable did in ``APIConfig/AuthenticationSettings/withheldBy``.
    private func withholdCredentialsFromMovedBaseURL(_ config: inout APIConfig) {
        guard let variable = movingVariable(for: "baseURL"),
            let own = fileAlone?.string(forKey: ConfigKey("baseURL")).flatMap({ URL(string: $0) }),
            !Origin.same(own, config.baseURL)
        else { return }
        let names = sensitiveNames(config)
        var withheld: [String] = []
        if !config.authentication.storages.isEmpty {
            withheld.append(qualified("authentication.storages"))
            config.authentication.storages = []
            config.authentication.optional = []
        }
        if config.http.tls.clientKeyFile != nil || config.http.tls.clientCertificateFile != nil {
            withheld.append(qualified("http.tls.clientKeyFile"))
            config.http.tls.clientKeyFile = nil
            config.http.tls.clientCertificateFile = nil
        }
        let headers = config.baseHeaders.keys.filter(names.isSensitiveHeader)
        if !headers.isEmpty {
            withheld.append(qualified("baseHeaders"))
            for name in headers { config.baseHeaders[name] = nil }
        }
        let items = config.baseQueryItems.keys.filter(names.contains)
        if !items.isEmpty {
            withheld.append(qualified("baseQueryItems"))
            for name in items { config.baseQueryItems[name] = nil }
        }
        guard !withheld.isEmpty else { return }
        config.authentication.withheldBy = APIConfig.WithheldCredentials(variable: variable, keys: withheld)
    }
}

extension APIConfig {
    /// The file's credentials left out because an environment variable moved the base URL to
    /// another origin than the file's own.
    package struct WithheldCredentials: Sendable, Equatable {
        /// The variable that moved the base URL, such as `RESOURCEFUL_BASE_URL`.
        package var variable: String
        /// The keys whose credentials were left out, such as `authentication.storages`.
        package var keys: [String]

        /// What a person is told: the variable, and what was left out; never a value.
        package var description: String {
            "\(variable) names another origin than the configuration file's baseURL: the file's credentials (\(keys.joined(separator: ", "))) are not sent there"
        }
    }
}
