import Foundation
import Resourceful

/// The configuration and path of one call: from a configuration file, `--base-url`,
/// `RESOURCEFUL_BASE_URL` alone, or a whole URL given as the path, with `--header` and
/// `--timeout` applied.
///
/// A base URL given by the flag or a variable on another origin than the file's `baseURL` gets
/// none of the file's credentials nor its TLS trust settings; a configuration the user did not
/// choose (none, or the working directory's `Configs`) cannot lower TLS trust for a call that
/// carries a credential.
struct CallTarget {
    /// The configuration the call is made with.
    var config: APIConfig
    /// The path relative to the configuration's base URL, percent-encoded.
    var path: String
    /// What the person is warned about: the configuration's credentials left out.
    var warnings: [String] = []
    /// The file's configuration with its credential storages, kept for its proxy's credential
    /// alone (`http.proxyCredentialService`) when the base URL moved to another origin; `nil`
    /// when the proxy's credential comes from ``config``'s storages.
    var proxyCredentialConfig: APIConfig?
    /// Whether the user chose the configuration (`--config-directory`, an absolute
    /// `RESOURCEFUL_CONFIG_DIR`), rather than none or the working directory's `Configs`.
    var isChosen = false
    /// Whether the credential's service is the base URL's host (no file, or another origin than
    /// the file's), so that a keyring item is found by the host alone.
    var serviceIsHost = false
    /// The variable that named the base URL (on another origin than the file's, for a file that
    /// names none, or without a file) when the command line named none (`--base-url`, a whole
    /// URL): a credential the command adds does not go there.
    var baseURLMovedBy: String?

    /// What the person is told when the configuration names a store its state is shared in
    /// (`sharedState.kind`): a command keeps its state for its own process, and does not link the
    /// store's module.
    static func unusedSharedState(_ config: APIConfig) -> String? {
        guard let kind = config.sharedState.kind else { return nil }
        // Named only when it is a plain name: a file not written by the person says no more.
        let plain = kind.count <= 40 && kind.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }
        return "the configuration's sharedState\(plain ? " (kind '\(kind)')" : "") is not used: resourceful keeps its rate budgets, "
            + "circuit breakers and tokens for its own process (an app shares them through ResourcefulPostgres)"
    }

    /// The name of the variable that gives the base URL without a file.
    static let baseURLVariable = "RESOURCEFUL_BASE_URL"

    /// The variable that overrides `services.<service>.baseURL`, as the configuration reads it.
    static func serviceBaseURLVariable(_ service: String) -> String {
        var name = ""
        var previous: Character?
        for character in service {
            if let previous, previous.isLowercase, character.isUppercase { name += "_" }
            name += character.isASCII && (character.isLetter || character.isNumber) ? character.uppercased() : "_"
            previous = character
        }
        return "\(baseURLVariable.dropLast("BASE_URL".count))SERVICES_\(name)_BASE_URL"
    }

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
        let folder = APIConfig.directory(configDirectory: options.configDirectory, variables: variables)
        let variableURL = variables[baseURLVariable].flatMap { $0.isEmpty ? nil : $0 }
        if !folder.isChosen, options.service == nil, options.baseURL != nil || variableURL != nil || absolute != nil {
            // A base URL or a whole URL given: a folder found where the command runs (a cloned
            // repository's `Configs`) has no say in the call, as if there were no file.
            switch Self.withoutFile(options, absolute: absolute, variables: variables, missing: nil) {
            case .success(let config): target = CallTarget(config: config, path: "", serviceIsHost: true)
            case .failure(let error): return .failure(error)
            }
            if options.baseURL == nil, absolute == nil { target.baseURLMovedBy = baseURLVariable }
        } else {
            do throws(APIError) {
                target = try await Self.fromFile(options, variables: variables)
                target.isChosen = folder.isChosen
            } catch {
                guard (error.underlying as? APIConfigError)?.kind == .missingFile else { return .failure(.configuration(CallReport.describe(error))) }
                switch Self.withoutFile(options, absolute: absolute, variables: variables, missing: error) {
                case .success(let config): target = CallTarget(config: config, path: "", serviceIsHost: true)
                case .failure(let error): return .failure(error)
                }
                if options.baseURL == nil, absolute == nil { target.baseURLMovedBy = baseURLVariable }
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
        let headers: [(name: String, value: String)]
        do {
            headers = try options.parsedHeaders()
        } catch {
            return .failure(.invalid(CallReport.describe(error)))
        }
        for header in headers {
            for name in target.config.baseHeaders.keys where name.lowercased() == header.name.lowercased() {
                target.config.baseHeaders[name] = nil
            }
            target.config.baseHeaders[header.name] = header.value
        }
        if let timeout = options.timeout {
            target.config.timeout = .milliseconds(Int64((timeout * 1000).rounded()))
        }
        if options.compressed { target.config.http.decompression = true }
        if let problem = target.credentialProblem(options, headers: headers, variables: variables) { return .failure(.configuration(problem)) }
        return .success(target)
    }

    /// The file's configuration, with a base URL from `--base-url`, `RESOURCEFUL_BASE_URL` or
    /// the picked service's `RESOURCEFUL_SERVICES_<NAME>_BASE_URL` compared with the file's own:
    /// on another origin, the file's credentials stay behind whichever of them moved it.
    private static func fromFile(_ options: CallOptions, variables: [String: String]) async throws(APIError) -> CallTarget {
        let load = { (variables: [String: String]) async throws(APIError) -> APIConfig in
            try await APIConfig.load(
                environment: options.environment, configDirectory: options.configDirectory, environmentVariables: variables, service: options.service
            )
        }
        let effective = try await load(variables)
        let names = [baseURLVariable] + (options.service.map { [serviceBaseURLVariable($0)] } ?? [])
        var fileVariables = variables
        for name in names { fileVariables[name] = nil }
        var target: CallTarget
        // The flag wins over the variables: it alone is compared with the file's own base URL
        // then (never with one a variable put in its place).
        if fileVariables.count != variables.count, let file = try? await load(fileVariables) {
            target = CallTarget(config: file, path: "")
            if options.baseURL == nil, effective.baseURL != file.baseURL,
                let name = names.reversed().first(where: { variables[$0] != nil })
            {
                target.replaceBaseURL(with: effective.baseURL, by: name)
            }
        } else {
            // No variable moved the base URL, or the file has none of its own to compare with:
            // then a variable alone named the host.
            target = CallTarget(config: effective, path: "")
            if options.baseURL == nil, fileVariables.count != variables.count, let name = names.reversed().first(where: { variables[$0] != nil }) {
                target.baseURLMovedBy = name
            }
        }
        if let flag = options.baseURL.flatMap(URL.init(string:)) { target.replaceBaseURL(with: flag, by: "--base-url") }
        return target
    }

    /// Why the call must not be made with the credential it carries (`--account`, or a header
    /// field named like a credential): a stored credential found by host alone over plain http
    /// to a host that is not this machine, an environment variable that would move it or lower
    /// the TLS trust it is sent over (as for the file's own credentials, which the configuration
    /// checked when it was loaded, before the command added this one), or TLS trust lowered by a
    /// configuration the user did not choose. `nil` when it may.
    private func credentialProblem(_ options: CallOptions, headers: [(name: String, value: String)], variables: [String: String]) -> String? {
        // `--curl` and `--replay` send nothing over the network.
        guard !options.curl, options.replay == nil else { return nil }
        let redactor = Redactor(settings: config.logging)
        let typed = headers.map(\.name).filter(redactor.masksHeader)
        let sent = (options.account != nil ? ["--account"] : []) + typed.map { "--header \($0)" }
        if let problem = trustProblem(options, typed: typed, sent: sent, variables: variables) { return problem }
        if let variable = baseURLMovedBy, !sent.isEmpty {
            return "resourceful: the call sends a credential (\(sent.joined(separator: ", "))) to \(Self.shownOrigin(config.baseURL)), which \(variable) names, not the command line nor a configuration file's baseURL: a variable may be set by something other than you; give the URL with --base-url, or unset \(variable)"
        }
        return nil
    }

    /// Why the credential (`sent`: `--account`, the `typed` header fields) must not be sent over
    /// the trust and route the configuration and the variables give; `nil` when it may.
    private func trustProblem(_ options: CallOptions, typed: [String], sent: [String], variables: [String: String]) -> String? {
        do throws(APIError) {
            try config.refuseVariablesMovingCredentials(sentBy: sent, variables: variables)
        } catch {
            return CallReport.describe(error)
        }
        if options.account != nil, serviceIsHost, config.baseURL.scheme?.lowercased() != "https", !Self.isLoopback(config.baseURL.host ?? "") {
            return "resourceful: --account sends the keyring item of \(config.baseURL.host ?? "the base URL's host") over plain http to another machine (\(Self.shownOrigin(config.baseURL))): give an https base URL, or choose a configuration file that names this service with --config-directory"
        }
        guard !isChosen, options.account != nil || !typed.isEmpty else { return nil }
        var lowered: [String] = []
        if config.http.dangerouslyDisableCertificateVerification { lowered.append("http.dangerouslyDisableCertificateVerification") }
        if config.http.tls.caFile != nil { lowered.append("http.tls.caFile") }
        if config.http.tls.caDirectory != nil { lowered.append("http.tls.caDirectory") }
        if !config.http.tls.trustSystemRoots { lowered.append("http.tls.trustSystemRoots") }
        guard !lowered.isEmpty else { return nil }
        return "resourceful: the call sends a credential (\(sent.joined(separator: ", "))) but TLS trust is changed (\(lowered.joined(separator: ", "))) by a configuration you did not choose (environment variables, or a file found in the working directory): \(CommandCredentials.howToChoose)"
    }

    /// Whether `host` is this machine: `localhost`, `127.0.0.0/8` or `::1`.
    static func isLoopback(_ host: String) -> Bool {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host == "localhost" || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { $0.count <= 3 && UInt8($0) != nil }
    }

    /// The origin of `url` as shown, or its host.
    private static func shownOrigin(_ url: URL) -> String {
        URLComponents(url: url, resolvingAgainstBaseURL: false).flatMap(origin(of:)) ?? (url.host ?? "")
    }

    /// The configuration of a call made without a configuration file: the environment's
    /// variables, with `--base-url` (or the whole URL's origin) as the base URL, the base URL's
    /// host as the service (the keyring item `--account` names is that host's), and no credential
    /// storage.
    private static func withoutFile(
        _ options: CallOptions, absolute: URLComponents?, variables: [String: String], missing: APIError?
    ) -> Result<APIConfig, CallTargetError> {
        var variables = variables
        if let flag = options.baseURL {
            variables[baseURLVariable] = flag
        } else if variables[baseURLVariable]?.isEmpty ?? true {
            guard let absolute, let origin = Self.origin(of: absolute) else {
                return .failure(.configuration(
                    "resourceful: \(missing?.detail ?? "no configuration file"); to call without one, give --base-url URL (or set \(baseURLVariable)), or a whole URL as the path"
                ))
            }
            variables[baseURLVariable] = origin
        }
        if options.service != nil {
            return .failure(.configuration("resourceful: --service picks a service a configuration file describes, and \(missing?.detail ?? "there is none")"))
        }
        // The credential's service is the host it goes to, whatever a variable says: variables
        // alone must not pick a stored secret (`--account`'s) and send it to the host they name.
        variables["RESOURCEFUL_SERVICE"] = variables[baseURLVariable].flatMap(URLComponents.init(string:))?.host.flatMap { $0.isEmpty ? nil : $0 } ?? "default"
        var config: APIConfig
        do throws(APIError) {
            config = try APIConfig.load(environmentVariablesOnly: variables)
        } catch {
            return .failure(.configuration(CallReport.describe(error)))
        }
        // A credential the command adds meets the checks of the variables the transport reads,
        // as a file's does: OpenSSL's, and a proxy it would cross in clear.
        let proxyVariable = "RESOURCEFUL_HTTP_PROXY"
        var rule = APIConfig.VariableRule(file: nil, caFileKey: "http.tls.caFile", caDirectoryKey: "http.tls.caDirectory", proxyKey: "http.proxy")
        if !(variables[proxyVariable] ?? "").isEmpty { rule.movedProxy = proxyVariable }
        config.authentication.variableRule = rule
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

    /// Makes `url` the base URL (given by `source`, a flag or a variable); when it is another
    /// origin than the file's, what the file names for its own server stays behind, as it would
    /// on a redirect there: its credential storages (kept for its proxy's credential alone), a
    /// TLS client certificate, all base header fields and query items, and the TLS trust settings
    /// (another server is checked with the default trust). The credential's service becomes the
    /// new URL's host, as without a file, so that `--account` names that host's keyring item.
    private mutating func replaceBaseURL(with url: URL, by source: String) {
        let previous = config.baseURL
        config.baseURL = url
        guard let before = URLComponents(url: previous, resolvingAgainstBaseURL: false),
            let after = URLComponents(url: url, resolvingAgainstBaseURL: false),
            Self.origin(of: before) != Self.origin(of: after)
        else { return }
        if config.http.proxyCredentialService != nil, proxyCredentialConfig == nil { proxyCredentialConfig = config }
        // The file's TLS trust is for its own server: what a variable lowered of it guards
        // nothing there (OpenSSL's variables and the proxy are still checked).
        config.authentication.variableRule?.loweredTrust = []
        config.service = after.host.flatMap { $0.isEmpty ? nil : $0 } ?? "default"
        serviceIsHost = true
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
        if !config.baseQueryItems.isEmpty {
            leftOut.append("its baseQueryItems")
            config.baseQueryItems = [:]
        }
        let tls = config.http.tls
        if config.http.dangerouslyDisableCertificateVerification || tls.caFile != nil || tls.caDirectory != nil || !tls.trustSystemRoots {
            leftOut.append("its TLS trust settings (the default trust checks that server)")
            config.http.dangerouslyDisableCertificateVerification = false
            config.http.tls.caFile = nil
            config.http.tls.caDirectory = nil
            config.http.tls.trustSystemRoots = true
        }
        // What is left to send is the proxy's credential, to the proxy.
        config.authentication.variableRule?.credentialKeys.removeAll { !$0.hasSuffix("http.proxyCredentialService") }
        if source != "--base-url" { baseURLMovedBy = source }
        guard !leftOut.isEmpty else { return }
        warnings.append(
            "\(source) names another origin than the configuration's baseURL: \(leftOut.joined(separator: ", ")) are not sent there"
                + (source == "--base-url" ? "; name a credential with --account or --header" : "; to send a credential there, give the URL with --base-url")
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
