import Foundation

extension APIConfig.HTTPSettings {
    /// The settings under `keys` (`http`), `http.tls` among them, checked; the defaults for those
    /// not set. The keys and their ranges are in <doc:Configuration>.
    ///
    /// - Throws: ``APIError/Kind/invalidConfiguration`` naming the key at fault; never a proxy
    ///   URL, which may hold a password.
    public init(keys: ConfigurationKeys) throws(APIError) {
        self.init()
        maximumConnectionsPerHost =
            try keys.int("maximumConnectionsPerHost", in: APIConfig.Limits.connectionsPerHost, unit: "connections") ?? maximumConnectionsPerHost
        idleTimeout = try keys.seconds("idleTimeout", allowZero: false) ?? idleTimeout
        connectTimeout = try keys.seconds("connectTimeout", allowZero: false) ?? connectTimeout
        connectRetryBudget = try keys.seconds("connectRetryBudget", allowZero: true) ?? connectRetryBudget
        maxRedirects = try keys.int("maxRedirects", in: APIConfig.Limits.maxRedirects, unit: "redirects") ?? maxRedirects
        if let names = try keys.stringArray("redirects.sensitiveHeaders") {
            guard names.allSatisfy(HeaderValidation.isValidName) else {
                throw keys.invalid("redirects.sensitiveHeaders", expected: "header names")
            }
            sensitiveRedirectHeaders = keys.addingTopLevelNames(names, of: "redirects.sensitiveHeaders")
        }
        decompression = try keys.bool("decompression") ?? decompression
        maxDecompressionRatio =
            try keys.int("maxDecompressionRatio", in: APIConfig.Limits.decompressionRatio, unit: "as a ratio") ?? maxDecompressionRatio
        version = try keys.choice("version") ?? version
        if let proxy = try keys.string("proxy") {
            switch proxy {
            case "none": self.proxy = .none
            case "environment": self.proxy = .environment
            default:
                guard let url = URL(string: proxy), APIConfig.proxyProblem(with: url) == nil else {
                    // The URL is not repeated: it may hold a password.
                    throw keys.invalid("proxy", expected: "none, environment, or an http:// proxy URL without user or password")
                }
                self.proxy = .url(url)
            }
        }
        if let service = try keys.string("proxyCredentialService") {
            guard !service.isEmpty else { throw keys.invalid("proxyCredentialService", expected: "a non-empty service name") }
            proxyCredentialService = service
        }
        tls = try APIConfig.TLSSettings(keys: keys.scoped(to: "tls"))
        dangerouslyDisableCertificateVerification =
            try keys.bool("dangerouslyDisableCertificateVerification") ?? dangerouslyDisableCertificateVerification
    }
}
