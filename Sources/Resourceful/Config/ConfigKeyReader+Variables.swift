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
    ///   refused, naming the variable and the key: set the key in the file instead. So are
    ///   OpenSSL's `SSL_CERT_FILE` and `SSL_CERT_DIR` when the file configures no CA of its own
    ///   (`http.tls.caFile`, `http.tls.caDirectory`): their certificates would take the place of
    ///   the system's roots. A value naming the system's own store (`/etc/ssl/certs`,
    ///   `/etc/ssl/certs/ca-certificates.crt` and the like) is taken.
    /// - A variable that names a proxy other than the file's (`RESOURCEFUL_HTTP_PROXY`) is refused
    ///   when the proxy login (`http.proxyCredentialService`) would go to it, or the API's
    ///   credential would cross it in clear (a plain `http` base URL that is not loopback); so is
    ///   `http_proxy` in that second case when `http.proxy` is `environment` (the default) and
    ///   `no_proxy` does not exempt the base URL. A proxy login goes to a proxy the file names by
    ///   URL only: not to the one the `https_proxy` and `http_proxy` variables name.
    /// - A base URL from a variable on another origin than the file's own `baseURL` (the picked
    ///   service's, else the top level's) gets none of what the file names for its own server, as
    ///   on a redirect there: no credential storage, TLS client certificate, base header field or
    ///   base query item. So does a base URL from a variable for a file that names none: the
    ///   variable alone would choose where the file's credentials go.
    /// - A variable that picks which stored credential goes out (`service`,
    ///   `http.proxyCredentialService`, `authentication.storages`, `authentication.file.directory`, the TLS client certificate
    ///   and key) with another value than the file's is refused: another service's credential
    ///   would go to the file's server or proxy. (The OAuth 2 and keyring
    ///   modules refuse theirs likewise: the client secret's and private key's names and storages,
    ///   the keyring account.)
    /// - A variable for a list of masked or redirect-sensitive names (`logging.maskedHeaders`,
    ///   `logging.maskedBodyKeys`, `http.redirects.sensitiveHeaders`) adds to the file's list.
    ///
    /// What the variables changed is kept in ``APIConfig/AuthenticationSettings/variableRule``,
    /// so that a credential a program adds after loading (the command-line tool's `--account`)
    /// meets the same checks (``APIConfig/refuseVariablesMovingCredentials(sentBy:variables:)``).
    ///
    /// Nothing is checked for a configuration read without a file (an app's reader, or variables
    /// alone): there the program, or the variables, chose everything.
    ///
    /// - Throws: ``APIConfigError`` of kind ``APIConfigError/Kind/movedByVariable`` naming the
    ///   variable and the key; never a value.
    func refuseCredentialsMovedByVariables(_ config: inout APIConfig) throws(APIConfigError) {
        guard let file, fileAlone != nil else { return }
        // First what a moved base URL leaves out: what is left is what the other checks guard.
        withholdCredentialsFromMovedBaseURL(&config)
        try refuseVariablesPickingCredentials()
        var rule = APIConfig.VariableRule(
            file: file, caFileKey: qualified("http.tls.caFile"), caDirectoryKey: qualified("http.tls.caDirectory"),
            proxyKey: qualified("http.proxy")
        )
        for key in Self.trustKeys where lowersTrust(key, config: config) {
            if let variable = movingVariable(for: key) { rule.loweredTrust.append(.init(variable: variable, key: qualified(key))) }
        }
        rule.movedProxy = movingVariable(for: "http.proxy")
        rule.credentialKeys = credentialKeys(config)
        config.authentication.variableRule = rule
        try config.refuseVariablesMovingCredentials(rule.credentialKeys, variables: variables)
        try refuseProxyLoginMovedByVariable(config)
        keepTheFilesProtectedNames(&config)
    }

    /// Refuses a variable that picks which stored credential the file's servers get: `service`
    /// (every storage, login and refresh token is looked up and kept by it),
    /// `http.proxyCredentialService` (the proxy login's), `authentication.storages` (where the
    /// credential is read from), `authentication.file.directory` (the
    /// folder the `file` storage reads, where a file named like the service may hold, or link to,
    /// another's) and the TLS client certificate and key (who the client is to the server). Set
    /// to another value than the file's, such a variable would send another service's credential
    /// to the file's server or proxy, or keep a login made for the file's server as another
    /// service's.
    private func refuseVariablesPickingCredentials() throws(APIConfigError) {
        let picks = [
            ("service", "the stored credentials, logins and refresh tokens are looked up and kept by it: another service's would go to the file's server"),
            ("http.proxyCredentialService", "it names the stored credential sent to the proxy: another service's would go to the file's proxy"),
            ("authentication.storages", "it picks where the credential is read from: a storage or folder the file did not choose would give the file's server its credential"),
            ("authentication.file.directory", "the file storage reads the credential from the folder it names: another folder's would go to the file's server"),
            ("http.tls.clientCertificateFile", "it picks who the client is to the file's server"),
            ("http.tls.clientKeyFile", "it picks who the client is to the file's server"),
        ]
        for (key, reason) in picks {
            try refuseVariable(for: key, because: reason)
        }
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
        // A list in the file is compared as a list: a variable writes it `a,b`.
        if let ownList = fileAlone.stringArray(forKey: configKey) {
            return reader.stringArray(forKey: configKey) == ownList ? nil : source
        }
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

    /// Refuses a proxy a variable names when the proxy login would reach it: a proxy login is
    /// given to a proxy the file names by URL alone.
    private func refuseProxyLoginMovedByVariable(_ config: APIConfig) throws(APIConfigError) {
        guard config.http.proxy != .none, config.http.proxyCredentialService != nil else { return }
        let key = "http.proxy"
        try refuseVariable(for: key, because: "the proxy login (\(qualified("http.proxyCredentialService"))) would be sent to the proxy it names")
        if config.http.proxy == .environment {
            throw invalid(
                "http.proxyCredentialService",
                expected: "a proxy the file names by URL in \(qualified(key)) (http://host:port) for the proxy login to be sent to: the proxy the https_proxy or http_proxy variables name may be set by something other than the user who chose the file"
            )
        }
    }

    /// Leaves out what the file names for its own server (credentials, base header fields and
    /// query items) when a variable moved the base URL to another origin than the file's own, or
    /// gave the base URL of a file that names none, noting which variable did in
    /// ``APIConfig/AuthenticationSettings/withheldBy``.
    private func withholdCredentialsFromMovedBaseURL(_ config: inout APIConfig) {
        guard let variable = movingVariable(for: "baseURL") else { return }
        // A file without a base URL of its own leaves the host to whatever sets the variable:
        // what it names for its server does not go there either.
        if let own = fileAlone?.string(forKey: ConfigKey("baseURL")).flatMap({ URL(string: $0) }), Origin.same(own, config.baseURL) { return }
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
        // Every base header field and query item, as a redirect to another origin strips them
        // (and as the command-line tool does): which of them carry a credential is the file's to
        // know, not a list of names'.
        if !config.baseHeaders.isEmpty {
            withheld.append(qualified("baseHeaders"))
            config.baseHeaders = [:]
        }
        if !config.baseQueryItems.isEmpty {
            withheld.append(qualified("baseQueryItems"))
            config.baseQueryItems = [:]
        }
        guard !withheld.isEmpty else { return }
        config.authentication.withheldBy = APIConfig.WithheldCredentials(variable: variable, keys: withheld)
    }
}

extension APIConfig {
    /// What the file names for its own server (credentials, base header fields and query items),
    /// left out because an environment variable moved the base URL to another origin than the
    /// file's own.
    package struct WithheldCredentials: Sendable, Equatable {
        /// The variable that moved the base URL, such as `RESOURCEFUL_BASE_URL`.
        package var variable: String
        /// The keys whose values were left out, such as `authentication.storages` or `baseHeaders`.
        package var keys: [String]

        /// What a person is told: the variable, and what was left out; never a value.
        package var description: String {
            "\(variable) names another origin than the configuration file's baseURL (or the file names none): what the file names for its own server (\(keys.joined(separator: ", "))) is not sent there"
        }
    }
}

extension APIConfig {
    /// What the environment variables changed of a configuration file's trust and proxy, kept
    /// when it was loaded (``load(environment:configDirectory:environmentVariables:service:)``)
    /// for the checks a credential added later meets
    /// (``refuseVariablesMovingCredentials(sentBy:variables:)``): the file is gone by then.
    package struct VariableRule: Sendable, Equatable {
        /// A variable and the key it changed, as written where its value is.
        package struct Moved: Sendable, Equatable {
            /// The variable, such as `RESOURCEFUL_HTTP_TLS_CA_FILE`.
            package var variable: String
            /// The key, such as `http.tls.caFile` or `services.b.http.tls.caFile`.
            package var key: String
        }

        /// The configuration file read; `nil` for a configuration of variables alone, whose
        /// credentials a program adds (the command-line tool without a file).
        package var file: String?
        /// The keys of `http.tls.caFile`, `http.tls.caDirectory` and `http.proxy`, as written
        /// where their values are: what a refusal tells the user to set in the file.
        package var caFileKey: String
        package var caDirectoryKey: String
        package var proxyKey: String
        /// The variables that lower the TLS trust the file asks for.
        package var loweredTrust: [Moved] = []
        /// The variable that sets `http.proxy` to another value than the file's, if one does.
        package var movedProxy: String? = nil
        /// The keys that name the configuration's credentials (`authentication.storages`,
        /// `baseHeaders` with a credential field, …): what the transport's variables are checked
        /// against again where the transport is made.
        package var credentialKeys: [String] = []

        /// A rule for `file`, whose keys are written as `caFileKey`, `caDirectoryKey` and `proxyKey`.
        package init(file: String?, caFileKey: String, caDirectoryKey: String, proxyKey: String) {
            self.file = file
            self.caFileKey = caFileKey
            self.caDirectoryKey = caDirectoryKey
            self.proxyKey = proxyKey
        }
    }

    /// Refuses the environment variables that would move a credential or lower the trust it is
    /// sent over, when `credentials` (what sends one: a command's `--account`, a header field) is
    /// not empty: the same checks the file's own credentials meet when the configuration is
    /// loaded, for one a program adds afterwards. `variables` are the ones the transport reads
    /// (`SSL_CERT_FILE`, `SSL_CERT_DIR`, `http_proxy`, `no_proxy`): the process environment for
    /// the live transport. Nothing is checked for a configuration without a
    /// ``APIConfig/AuthenticationSettings/variableRule`` (one built in code: the program chose
    /// everything).
    ///
    /// - Throws: ``APIError/Kind/invalidConfiguration`` whose underlying ``APIConfigError`` is of
    ///   kind ``APIConfigError/Kind/movedByVariable``, naming the variable and the key; never a value.
    package func refuseVariablesMovingCredentials(sentBy credentials: [String], variables: [String: String]) throws(APIError) {
        do {
            try refuseVariablesMovingCredentials(credentials, variables: variables)
        } catch {
            throw error.apiError
        }
    }

    /// The system's own certificate stores: the files and folders the TLS library reads for the
    /// system's roots, and those of the common distributions. Their folders are root's to write.
    static let systemTrustStores = (
        files: [
            "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
            "/etc/ssl/ca-bundle.pem", "/etc/ssl/cert.pem", "/etc/pki/tls/cacert.pem",
        ],
        directories: ["/etc/ssl/certs", "/etc/pki/tls/certs", "/etc/pki/ca-trust/extracted/pem"]
    )

    /// Whether `value` (of `SSL_CERT_FILE`, or of `SSL_CERT_DIR` when `directories`, a list
    /// separated by `:`) names the system's own stores alone, as written: no file is looked at.
    static func namesSystemTrustStore(_ value: String, directories: Bool) -> Bool {
        guard directories else { return systemTrustStores.files.contains(value) }
        let entries = value.split(separator: ":").map { entry in
            var path = String(entry)
            while path.count > 1, path.hasSuffix("/") { path.removeLast() }
            return path
        }
        return !entries.isEmpty && entries.allSatisfy(systemTrustStores.directories.contains)
    }

    /// ``refuseVariablesMovingCredentials(sentBy:variables:)``, with the configuration's error.
    func refuseVariablesMovingCredentials(_ credentials: [String], variables: [String: String]) throws(APIConfigError) {
        guard let rule = authentication.variableRule, !credentials.isEmpty else { return }
        let sent = "the credentials (\(credentials.joined(separator: ", ")))"
        // Without a file, what to set instead goes in one the user chooses.
        func inFile(_ keys: String) -> String {
            rule.file == nil ? "choose a configuration file that sets \(keys) (--config-directory)" : "set \(keys) in the file instead"
        }
        func refusal(_ variable: String, _ key: String, because reason: String, instead: String) -> APIConfigError {
            APIConfigError(
                kind: .movedByVariable, file: rule.file, key: key, source: variable,
                expected: "no such variable, because \(reason): a variable may be set by something other than the user\(rule.file == nil ? "" : " who chose the file"); \(instead), or unset \(variable)"
            )
        }
        if let moved = rule.loweredTrust.first {
            throw refusal(moved.variable, moved.key, because: "it lowers the TLS trust that \(sent) are sent over", instead: inFile(moved.key))
        }
        // OpenSSL's variables, read as the transport reads them: where the file names no CA.
        // One that names the system's own store (root's to write, what many distributions and
        // Nix set them to) lowers nothing.
        if let variable = TLSTrust.openSSLVariables(trustedUnder: http, environment: variables).first(where: {
            !Self.namesSystemTrustStore(variables[$0] ?? "", directories: $0 == "SSL_CERT_DIR")
        }) {
            throw refusal(
                variable, variable == "SSL_CERT_DIR" ? rule.caDirectoryKey : rule.caFileKey,
                because: "its certificates take the place of the system's roots that \(sent) are sent over",
                instead: inFile("\(rule.caFileKey) or \(rule.caDirectoryKey)") + " (with http.tls.trustSystemRoots false to trust that CA alone)"
            )
        }
        // Over plain http to another machine, a proxy sees the credential. Loopback targets never
        // go through a proxy, whatever names it.
        guard baseURL.scheme?.lowercased() == "http", ProxyRoute.Target(baseURL)?.isLoopback == false, http.proxy != .none else { return }
        let inClear = "\(sent) would cross the proxy it names in clear (the base URL is plain http)"
        if let variable = rule.movedProxy {
            throw refusal(variable, rule.proxyKey, because: inClear, instead: inFile(rule.proxyKey))
        }
        // The standard variables, when the file leaves the proxy to them: unless `no_proxy`
        // sends the base URL direct.
        if http.proxy == .environment, ProxyRoute(.environment, environment: variables).proxy(for: baseURL) != nil,
            let variable = ProxyRoute.httpVariables.first(where: { variables[$0] != nil })
        {
            throw refusal(
                variable, rule.proxyKey, because: inClear,
                instead: inFile("\(rule.proxyKey) to the proxy's URL (or none)") + ", give an https base URL, list the host in no_proxy"
            )
        }
    }
}
