import Foundation
import Resourceful

/// The configuration and path of one call: from a configuration file, `--base-url`,
/// `RESOURCEFUL_BASE_URL` alone, or a whole URL given as the path, with `--header` and
/// `--timeout` applied.
struct CallTarget {
    /// The configuration the call is made with.
    var config: APIConfig
    /// The path relative to the configuration's base URL, percent-encoded.
    var path: String
    /// What the person is warned about: the configuration's credentials left out.
    var warnings: [String] = []

    /// The name of the variable that gives the base URL without a file.
    static let baseURLVariable = "RESOURCEFUL_BASE_URL"

    /// The target `options` describe, read from `variables`; on a problem, the message to show and
    /// its exit code.
    static func resolve(_ options: CallOptions, variables: [String: String]) async -> Result<CallTarget, CallTargetError> {
        let absolute: URLComponents?
        do {
            absolute = try Self.absoluteURL(options.path)
        } catch {
            return .failure(error)
        }
        var target: CallTarget
        do throws(APIError) {
            let config = try await APIConfig.load(environment: options.environment, configDirectory: options.configDirectory, service: options.service)
            target = CallTarget(config: config, path: "")
            if let flag = options.baseURL.flatMap(URL.init(string:)) { target.replaceBaseURL(with: flag) }
        } catch {
            guard (error.underlying as? APIConfigError)?.kind == .missingFile else { return .failure(.configuration(CallReport.describe(error))) }
            switch Self.withoutFile(options, absolute: absolute, variables: variables, missing: error) {
            case .success(let config): target = CallTarget(config: config, path: "")
            case .failure(let error): return .failure(error)
            }
        }
        if let absolute {
            switch Self.relativePath(of: absolute, under: target.config.baseURL, logging: target.config.logging) {
            case .success(let path): target.path = path
            case .failure(let error): return .failure(error)
            }
        } else {
            target.path = Self.encodePath(options.path)
        }
        do {
            for header in try options.parsedHeaders() {
                for name in target.config.baseHeaders.keys where name.lowercased() == header.name.lowercased() {
                    target.config.baseHeaders[name] = nil
                }
                target.config.baseHeaders[header.name] = header.value
            }
        } catch {
            return .failure(.invalid(CallReport.describe(error)))
        }
        if let timeout = options.timeout {
            target.config.timeout = .milliseconds(Int64((timeout * 1000).rounded()))
        }
        return .success(target)
    }

    /// The configuration of a call made without a configuration file: the environment's
    /// variables, with `--base-url` (or the whole URL's origin) as the base URL, the base URL's
    /// host as the service (the keyring item `--account` names is that host's), and no credential
    /// storage.
    private static func withoutFile(
        _ options: CallOptions, absolute: URLComponents?, variables: [String: String], missing: APIError
    ) -> Result<APIConfig, CallTargetError> {
        var variables = variables
        if let flag = options.baseURL {
            variables[baseURLVariable] = flag
        } else if variables[baseURLVariable]?.isEmpty ?? true {
            guard let absolute, let origin = Self.origin(of: absolute) else {
                return .failure(.configuration(
                    "resourceful: \(missing.detail ?? "no configuration file"); to call without one, give --base-url URL (or set \(baseURLVariable)), or a whole URL as the path"
                ))
            }
            variables[baseURLVariable] = origin
        }
        if options.service != nil {
            return .failure(.configuration("resourceful: --service picks a service a configuration file describes, and \(missing.detail ?? "there is none")"))
        }
        // The credential's service is the host it goes to, whatever a variable says: variables
        // alone must not pick a stored secret (`--account`'s) and send it to the host they name.
        variables["RESOURCEFUL_SERVICE"] = variables[baseURLVariable].flatMap(URLComponents.init(string:))?.host.flatMap { $0.isEmpty ? nil : $0 } ?? "default"
        let config: APIConfig
        do throws(APIError) {
            config = try APIConfig.load(environmentVariablesOnly: variables)
        } catch {
            return .failure(.configuration(CallReport.describe(error)))
        }
        // Variables set by something else (a folder's environment file) must not choose a
        // secret and the host it goes to: without a file, only the command line names one.
        var named = config.authentication.storages.map(\.rawValue) + config.authentication.optional.map(\.rawValue)
        if config.http.tls.clientKeyFile != nil { named.append("http.tls.clientKeyFile") }
        if config.http.proxyCredentialService != nil { named.append("http.proxyCredentialService") }
        guard named.isEmpty else {
            return .failure(.configuration(
                "resourceful: environment variables name credentials (\(named.joined(separator: ", "))) but no configuration file was read: a call without one sends no stored credential; name one with --account or --header, or choose a configuration with --config-directory"
            ))
        }
        return .success(config)
    }

    /// Makes `url` the base URL; when it is another origin than the file's, the credentials the
    /// file names (storages, a TLS client key, base header fields, masked base query items) stay
    /// behind, as they would on a redirect there.
    private mutating func replaceBaseURL(with url: URL) {
        let previous = config.baseURL
        config.baseURL = url
        guard let before = URLComponents(url: previous, resolvingAgainstBaseURL: false),
            let after = URLComponents(url: url, resolvingAgainstBaseURL: false),
            Self.origin(of: before) != Self.origin(of: after)
        else { return }
        var leftOut: [String] = []
        if !config.authentication.storages.isEmpty || !config.authentication.optional.isEmpty {
            leftOut.append("its credential storages")
            config.authentication.storages = []
            config.authentication.optional = []
        }
        if config.http.tls.clientKeyFile != nil || config.http.tls.clientCertificateFile != nil {
            leftOut.append("its TLS client certificate")
            config.http.tls.clientKeyFile = nil
            config.http.tls.clientCertificateFile = nil
        }
        if !config.baseHeaders.isEmpty {
            leftOut.append("its baseHeaders")
            config.baseHeaders = [:]
        }
        let redactor = Redactor(settings: config.logging)
        let masked = config.baseQueryItems.keys.filter(redactor.isMasked(formName:))
        if !masked.isEmpty {
            leftOut.append("its masked baseQueryItems")
            for name in masked { config.baseQueryItems[name] = nil }
        }
        guard !leftOut.isEmpty else { return }
        warnings.append(
            "--base-url names another origin than the configuration's baseURL: \(leftOut.joined(separator: ", ")) are not sent there; name a credential with --account or --header"
        )
    }

    /// The path as a whole URL (`http://host/v1/users/1`), or `nil` for a relative path.
    private static func absoluteURL(_ path: String) throws(CallTargetError) -> URLComponents? {
        guard let colon = path.range(of: "://"),
            let first = path.first, first.isASCII, first.isLetter,
            path[..<colon.lowerBound].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") })
        else { return nil }
        // Shown without its userinfo, and with the values of query fields named like secrets masked.
        let shown = Redactor(settings: APIConfig.LogSettings()).maskedURLs(in: path)
        guard let components = URLComponents(string: path), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
        else {
            throw .invalid("resourceful: \(shown) is not an http or https URL: give a path relative to the base URL, or a whole http or https URL")
        }
        if components.user != nil || components.password != nil {
            throw .invalid("resourceful: \(shown) holds a user or password: give the credential with --account or --header, not in the URL")
        }
        if components.query != nil || components.fragment != nil {
            throw .invalid("resourceful: a whole URL as the path takes no query or fragment: give its parameters as name=value arguments")
        }
        let segments = components.percentEncodedPath.split(separator: "/", omittingEmptySubsequences: false)
        if segments.contains(where: { [".", ".."].contains($0.removingPercentEncoding ?? String($0)) }) {
            throw .invalid("resourceful: \(shown) holds a '.' or '..' segment: give the path it stands for")
        }
        return components
    }

    /// `scheme://host[:port]` of `url`, scheme and host in lower case, the default port left out.
    private static func origin(of url: URLComponents) -> String? {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        let defaultPort = scheme == "https" ? 443 : 80
        let port = url.port.map { $0 == defaultPort ? "" : ":\($0)" } ?? ""
        let shownHost = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(scheme)://\(shownHost)\(port)"
    }

    /// The path of `url` relative to `base`, when `url` is under it: the same origin, and the
    /// base's path segments first.
    private static func relativePath(of url: URLComponents, under base: URL, logging: APIConfig.LogSettings) -> Result<String, CallTargetError> {
        let shownBase = Redactor(settings: logging).maskedURLs(in: base.absoluteString)
        let shownURL = Redactor(settings: logging).maskedURLs(in: url.string ?? "")
        guard let baseComponents = URLComponents(url: base, resolvingAgainstBaseURL: false), origin(of: baseComponents) == origin(of: url) else {
            return .failure(.invalid(
                "resourceful: \(shownURL) is not under the base URL \(shownBase) (another origin): give a path relative to it, or that URL's base with --base-url"
            ))
        }
        var basePath = baseComponents.percentEncodedPath
        while basePath.hasSuffix("/") { basePath.removeLast() }
        let path = url.percentEncodedPath
        if path == basePath || path == basePath + "/" { return .success("") }
        guard path.hasPrefix(basePath + "/") else {
            return .failure(.invalid(
                "resourceful: \(shownURL) is not under the base URL \(shownBase) (its path is not under \(basePath)): give a path relative to it, or that URL's base with --base-url"
            ))
        }
        return .success(encodePath(String(path.dropFirst(basePath.count + 1))))
    }

    /// The path as typed, with characters a path may not hold percent-encoded (`%` escapes kept).
    static func encodePath(_ path: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.insert("%")
        return path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
    }
}

/// Why a call's target could not be made: the message to show, and whether it is the
/// configuration's fault or the request's.
enum CallTargetError: Error {
    /// The configuration could not be loaded, or there is none and no base URL.
    case configuration(String)
    /// The path or an option cannot make a request.
    case invalid(String)
}
