/// Every key a configuration file may hold, each declared once, dotted as the file writes it:
/// the keys at the top level are the keys of each `services.<name>` too, and the environment
/// variables that override them (`RESOURCEFUL_…`) are made from the same names.
///
/// The settings types read these keys (`APIConfig.RetryPolicy(keys:)` and the others under
/// `Config/Keys`); a key one of them reads that is missing here is refused in every file that
/// sets it, and `ConfigurationKeyTableTests` checks that setting each key here changes the
/// configuration, so the two stay in step. A new key is added here, once.
enum ConfigurationKeyTable {
    /// The package's own keys.
    static let coreKeys: [String] = [
        "baseURL", "service", "baseHeaders", "baseQueryItems", "timeout", "maxResponseBytes",
        "coding.keyStrategy", "coding.dateStrategy", "coding.decoder", "coding.arrayFormat",
        "logging.level", "logging.maskedHeaders", "logging.maskedBodyKeys", "logging.maxBodyBytes",
        "retry.maxAttempts", "retry.baseDelay", "retry.maxDelay", "retry.retryableStatuses",
        "http.maximumConnectionsPerHost", "http.idleTimeout", "http.connectTimeout", "http.connectRetryBudget",
        "http.maxRedirects", "http.redirects.sensitiveHeaders", "http.decompression", "http.maxDecompressionRatio",
        "http.version", "http.proxy", "http.proxyCredentialService", "http.dangerouslyDisableCertificateVerification",
        "http.tls.caFile", "http.tls.caDirectory", "http.tls.trustSystemRoots", "http.tls.minimumVersion",
        "http.tls.clientCertificateFile", "http.tls.clientKeyFile",
        "cache.storesAuthorizedResponses",
        "limits.rate.requestsPerSecond", "limits.rate.burst", "limits.maxPause",
        "limits.breaker.failureRatio", "limits.breaker.minimumCalls", "limits.breaker.window", "limits.breaker.openInterval",
        "limits.breaker.probes", "limits.breaker.failureStatuses", "limits.breaker.windowCalls",
        "limits.breaker.slowCallDuration", "limits.breaker.slowCallRatio",
        "authentication.storages", "authentication.optional", "authentication.headerName",
        "authentication.file.directory", "authentication.file.scheme", "authentication.file.refreshInterval",
        "authentication.environment.prefix", "authentication.environment.scheme",
        "sharedState.kind",
    ]

    /// A kind another module of the package brings (a storage kind, or a kind of shared
    /// state), with the keys its factory reads under `<section>.<kind>`. A program that does not
    /// link the module ignores them (and logs so once, when its dependencies are made); a key of
    /// the kind that is not listed is an error whether or not the module is linked.
    struct Module: Sendable {
        /// The section the kind's keys are in: `authentication` or `sharedState`.
        var section = "authentication"
        /// The kind, as `authentication.storages` or `sharedState.kind` names it.
        let kind: String
        /// The module that reads the keys.
        let name: String
        /// Its keys under `<section>.<kind>`, dotted.
        let keys: [String]
    }

    /// The sections with a section of keys per kind, which a factory an app brings may read.
    static let kindSections = ["authentication", "sharedState"]

    /// The other modules' kinds.
    static let modules: [Module] = [
        Module(kind: "keyring", name: "ResourcefulKeyring", keys: ["account", "scheme"]),
        Module(
            kind: "oauth2", name: "ResourcefulOAuth2",
            keys: [
                "issuer", "tokenEndpoint", "deviceAuthorizationEndpoint", "authorizationEndpoint", "revocationEndpoint",
                "clientId", "clientAuthentication", "clientSecret.storage", "clientSecret.name",
                "privateKeyFile", "privateKey.storage", "privateKey.name", "keyId",
                "grant", "scopes", "audience", "resource", "skew", "refusalBackoff", "refreshTokenStorage",
            ]
        ),
        Module(
            section: "sharedState", kind: "postgres", name: "ResourcefulPostgres",
            keys: [
                "host", "port", "database", "username", "password.storage", "password.name", "tls", "caFile",
                "statementTimeout", "retryInterval", "breakerRefresh", "probeLease", "tokenLease",
                "sealingKey.storage", "sealingKey.name", "sealingKey.previousNames",
                "tokens", "whenUnavailable", "budgetsWhenUnavailable", "cache", "cacheMaxBytes",
            ]
        ),
    ]

    /// One level of the table.
    struct Node: Sendable {
        enum Kind: Sendable, Equatable {
            /// A key that holds a value.
            case value
            /// A section of known keys.
            case section
            /// `services`: each member is a service, with the top level's keys.
            case services
            /// `authentication` or `sharedState`: its known keys, and a section of keys for
            /// each kind, which a factory an app brings may read.
            case kinds
            /// `authentication.<kind>` or `sharedState.<kind>` of another module.
            case module(String)
        }

        var kind: Kind
        var children: [String: Node] = [:]

        /// Adds the dotted `key` below this node, as a value; the sections on its way are
        /// made `kind`'s sections.
        mutating func insert(_ key: ArraySlice<Substring>) {
            guard let first = key.first else { return }
            let name = String(first)
            if key.count == 1 {
                children[name] = Node(kind: .value)
            } else {
                var child = children[name] ?? Node(kind: .section)
                child.insert(key.dropFirst())
                children[name] = child
            }
        }
    }

    /// The keys of one service: the top level's, but for `services`.
    static let service: Node = {
        var root = Node(kind: .section)
        for key in coreKeys { root.insert(key.split(separator: ".")[...]) }
        for name in kindSections {
            var kinds = root.children[name] ?? Node(kind: .section)
            kinds.kind = .kinds
            for module in modules where module.section == name {
                var section = Node(kind: .module(module.name))
                for key in module.keys { section.insert(key.split(separator: ".")[...]) }
                kinds.children[module.kind] = section
            }
            root.children[name] = kinds
        }
        return root
    }()

    /// The keys at the top level.
    static let root: Node = {
        var root = service
        root.children["services"] = Node(kind: .services)
        return root
    }()

    /// The environment variable of every key (without the `RESOURCEFUL_` prefix, such as
    /// `RETRY_MAX_ATTEMPTS`), and the key it overrides.
    static let variables: [String: String] = {
        var variables: [String: String] = [:]
        for key in coreKeys { variables[APIConfig.environmentVariable(forKey: key, prefixed: false)] = key }
        for module in modules {
            for key in module.keys {
                let full = "\(module.section).\(module.kind).\(key)"
                variables[APIConfig.environmentVariable(forKey: full, prefixed: false)] = full
            }
        }
        return variables
    }()

    /// The known name nearest to `name` among `candidates`, if one is near enough to be what was
    /// meant: case aside, one edit for names of up to 6 characters, two for longer ones (an edit
    /// being a character added, removed, replaced, or two swapped), none for names of 3 or fewer.
    static func suggestion(for name: String, among candidates: some Sequence<String>) -> String? {
        let typed = Array(name.lowercased().unicodeScalars)
        let allowed = typed.count <= 3 ? 0 : typed.count <= 6 ? 1 : 2
        var best: (name: String, distance: Int)?
        for candidate in candidates.sorted() {
            let distance = editDistance(typed, Array(candidate.lowercased().unicodeScalars), limit: allowed)
            guard distance <= allowed, distance < (best?.distance ?? .max) else { continue }
            best = (candidate, distance)
        }
        return best?.name
    }

    /// The optimal string alignment distance between `a` and `b`, or `limit + 1` once it is
    /// known to be above `limit`.
    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar], limit: Int) -> Int {
        guard abs(a.count - b.count) <= limit else { return limit + 1 }
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            var rowMinimum = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { value = min(value, previous2[j - 2] + 1) }
                current[j] = value
                rowMinimum = min(rowMinimum, value)
            }
            guard rowMinimum <= limit else { return limit + 1 }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }
}
