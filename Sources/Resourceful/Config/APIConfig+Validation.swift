import Foundation

extension APIConfig {
    /// The allowed range of each numeric setting, checked for files, environment variables and
    /// configurations built in code alike. Listed in <doc:Configuration>.
    enum Limits {
        /// `maxResponseBytes`: a response body is held in one buffer, which holds at most 4 GiB − 1.
        static let maxResponseBytes = 1...Int(UInt32.max)
        /// `logging.maxBodyBytes`: up to 16 MiB of a body in one log line.
        static let maxLoggedBodyBytes = 0...(16 << 20)
        /// `retry.maxAttempts`.
        static let maxAttempts = 1...100
        /// `http.maximumConnectionsPerHost`.
        static let connectionsPerHost = 1...10_000
        /// `http.maxRedirects`.
        static let maxRedirects = 0...50
        /// `http.maxDecompressionRatio`.
        static let decompressionRatio = 1...100_000
        /// Every duration, in seconds: at most a day.
        static let maxSeconds: Double = 86_400
        /// HTTP status codes.
        static let statuses = 100...599
    }

    /// The first setting outside its allowed range: its dotted key and what is expected there.
    func firstProblem() -> (key: String, expected: String)? {
        if let expected = Self.problem(with: baseURL) { return ("baseURL", expected) }
        if service.isEmpty { return ("service", "a non-empty value") }
        if baseHeaders.contains(where: { !HeaderValidation.isValidName($0.key) || !HeaderValidation.isValidValue($0.value) }) {
            return ("baseHeaders", "valid header names and values without CR or LF")
        }
        if baseQueryItems.keys.contains(where: \.isEmpty) { return ("baseQueryItems", "names that are not empty") }
        if !HeaderValidation.isValidName(authentication.headerName) { return ("authentication.headerName", "a valid header field name") }
        let durations: [(String, Duration, Bool)] = [
            ("timeout", timeout, false),
            ("retry.baseDelay", retry.baseDelay, true),
            ("retry.maxDelay", retry.maxDelay, true),
            ("http.idleTimeout", http.idleTimeout, false),
            ("http.connectTimeout", http.connectTimeout, false),
            ("http.connectRetryBudget", http.connectRetryBudget, true),
            ("authentication.file.refreshInterval", authentication.fileRefreshInterval, true),
        ]
        for (key, duration, allowZero) in durations where !Self.isAllowed(duration, allowZero: allowZero) {
            return (key, Self.secondsExpectation(allowZero: allowZero))
        }
        let counts: [(String, Int, ClosedRange<Int>, String)] = [
            ("maxResponseBytes", maxResponseBytes, Limits.maxResponseBytes, "bytes"),
            ("logging.maxBodyBytes", logging.maxBodyBytes, Limits.maxLoggedBodyBytes, "bytes"),
            ("retry.maxAttempts", retry.maxAttempts, Limits.maxAttempts, "attempts"),
            ("http.maximumConnectionsPerHost", http.maximumConnectionsPerHost, Limits.connectionsPerHost, "connections"),
            ("http.maxRedirects", http.maxRedirects, Limits.maxRedirects, "redirects"),
            ("http.maxDecompressionRatio", http.maxDecompressionRatio, Limits.decompressionRatio, "as a ratio"),
        ]
        for (key, value, range, unit) in counts where !range.contains(value) {
            return (key, Self.rangeExpectation(range, unit: unit))
        }
        if case .url(let url) = http.proxy, let expected = Self.proxyProblem(with: url) { return ("http.proxy", expected) }
        if http.proxyCredentialService?.isEmpty == true { return ("http.proxyCredentialService", "a non-empty service name") }
        let paths = [
            ("http.tls.caFile", http.tls.caFile), ("http.tls.caDirectory", http.tls.caDirectory),
            ("http.tls.clientCertificateFile", http.tls.clientCertificateFile), ("http.tls.clientKeyFile", http.tls.clientKeyFile),
        ]
        for (key, path) in paths {
            if let path, path.isEmpty || path.contains("\0") { return (key, "a path") }
        }
        if (http.tls.clientCertificateFile == nil) != (http.tls.clientKeyFile == nil) {
            return (http.tls.clientKeyFile == nil ? "http.tls.clientKeyFile" : "http.tls.clientCertificateFile", "a client certificate and its key together")
        }
        if !retry.retryableStatuses.allSatisfy(Limits.statuses.contains) {
            return ("retry.retryableStatuses", "HTTP status codes from 100 to 599")
        }
        return nil
    }

    /// Why `url` cannot be a proxy's URL, or `nil` when it can: `http://host[:port]`, with no user
    /// or password (the credential comes from the storage).
    static func proxyProblem(with url: URL) -> String? {
        guard url.scheme?.lowercased() == "http", let host = url.host, !host.isEmpty else { return "an http:// proxy URL with a host" }
        guard url.user == nil, url.password == nil else {
            return "a proxy URL without user or password (name the credential in http.proxyCredentialService)"
        }
        return nil
    }

    /// Why `url` cannot be a base URL, or `nil` when it can.
    static func problem(with url: URL) -> String? {
        let expected = "an absolute http or https URL without user, password, query or fragment"
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else { return expected }
        if url.user != nil || url.password != nil {
            return "a URL without user or password (credentials belong in the authentication storage)"
        }
        if url.query != nil || url.fragment != nil || url.absoluteString.contains("?") || url.absoluteString.contains("#") {
            return "a URL without query or fragment (paths are appended to it)"
        }
        return nil
    }

    static func isAllowed(_ duration: Duration, allowZero: Bool) -> Bool {
        let limit = Duration.seconds(Int64(Limits.maxSeconds))
        return (allowZero ? duration >= .zero : duration > .zero) && duration <= limit
    }

    static func secondsExpectation(allowZero: Bool) -> String {
        (allowZero ? "zero" : "more than zero") + " to \(Int(Limits.maxSeconds)) seconds"
    }

    static func rangeExpectation(_ range: ClosedRange<Int>, unit: String) -> String {
        "\(range.lowerBound) to \(range.upperBound) \(unit)"
    }

    /// The ``APIError`` a call meets when this configuration, built in code, is not usable.
    func validationError() -> APIError? {
        guard let problem = firstProblem() else { return nil }
        return APIConfigError(kind: .invalidValue, file: nil, key: problem.key, source: "the configuration built in code", expected: problem.expected).apiError
    }
}
