/// Keys of another module's storage kind (`authentication.keyring.*`, `authentication.oauth2.*`)
/// that a configuration sets: ignored, with a warning, by a program that does not link it.
package struct OtherModuleKeys: Sendable, Hashable {
    /// The section of the kind: `authentication` or `sharedState`.
    package var section = "authentication"
    /// The kind whose keys they are.
    package let kind: APIConfig.StorageKind
    /// The module that reads them, such as `ResourcefulOAuth2`.
    package let module: String
    /// The first of them, as written (`services.crm.authentication.oauth2.clientId`), or the
    /// environment variable that sets it.
    package let key: String
    /// The file or the variable that sets it.
    package let source: String
}

/// Checks every key a configuration file and the `RESOURCEFUL_…` environment variables set
/// against ``ConfigurationKeyTable``, before any value is read: a key the package does not know
/// is an error naming it, where it is written and the known key nearest to it, rather than a
/// setting that silently keeps its default.
struct ConfigurationKeyCheck {
    /// The file checked; `nil` for variables alone.
    let file: String?
    private(set) var otherModules: [OtherModuleKeys] = []
    /// Every value's key seen, dotted, and where: `"http.maxRedirects"` and `"http": {"maxRedirects"}`
    /// are the same key.
    private var seen: [String: Int] = [:]
    /// The services the file describes, under `services`.
    private(set) var serviceNames: [String] = []

    init(file: String?) {
        self.file = file
    }

    /// Checks the file's keys, then the variables'; answers the other modules' keys set and the
    /// names of the services the file describes.
    static func check(
        _ json: ConfigJSON, file: String, variables: [String: String]
    ) throws(APIConfigError) -> (otherModules: [OtherModuleKeys], services: [String]) {
        var check = ConfigurationKeyCheck(file: file)
        try check.visit(json, at: ConfigurationKeyTable.root, path: [], line: 1)
        try check.checkVariables(variables)
        return (check.otherModules, check.serviceNames)
    }

    /// Checks the variables alone, for a configuration read without a file.
    static func check(variables: [String: String]) throws(APIConfigError) -> [OtherModuleKeys] {
        var check = ConfigurationKeyCheck(file: nil)
        try check.checkVariables(variables)
        return check.otherModules
    }

    // MARK: - The file

    private mutating func visit(_ value: ConfigJSON, at node: ConfigurationKeyTable.Node, path: [String], line: Int) throws(APIConfigError)
    {
        if case .module(let module) = node.kind, let kind = path.last, !otherModules.contains(where: { $0.module == module }) {
            otherModules.append(
                OtherModuleKeys(
                    section: path.dropLast().last ?? "authentication",
                    kind: APIConfig.StorageKind(rawValue: kind), module: module, key: path.joined(separator: "."),
                    source: file ?? "configuration"))
        }
        guard node.kind != .value else {
            if value.members != nil {
                throw APIConfigError(
                    kind: .wrongType, file: file, key: Self.dotted(path), expected: "a value, not an object of keys", line: line)
            }
            let key = Self.dotted(path)
            if let first = seen[key] {
                throw APIConfigError(
                    kind: .invalidValue, file: file, key: key, expected: "the key set once (it is also set on line \(first))", line: line)
            }
            seen[key] = line
            return
        }
        guard let members = value.members else {
            let known =
                node.kind == .services
                ? "services, each an object of keys" : "keys such as " + node.children.keys.sorted().prefix(4).joined(separator: ", ")
            throw APIConfigError(kind: .wrongType, file: file, key: Self.dotted(path), expected: "an object of \(known)", line: line)
        }
        for member in members {
            try visit(member, at: node, path: path)
        }
    }

    /// One member of an object at `node`; its key may be dotted (`"http.tls": {…}`), as the
    /// provider reads it.
    private mutating func visit(_ member: ConfigJSON.Member, at start: ConfigurationKeyTable.Node, path start_: [String])
        throws(APIConfigError)
    {
        var node = start
        var path = start_
        let components = member.key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        for (offset, name) in components.enumerated() {
            switch node.kind {
            case .value:
                throw unknown(
                    path + [name], line: member.line, column: member.column, suggestion: nil,
                    note: "'\(Self.dotted(path))' holds a value, not keys")
            case .services:
                if path.count == 1 { serviceNames.append(name) }
                node = ConfigurationKeyTable.service
            case .kinds where node.children[name] == nil:
                // A section of a storage kind an app's own factory reads: unless it is a known
                // key or kind mistyped, or holds no keys at all.
                let isSection = offset < components.count - 1 || member.value.members != nil
                let suggestion = ConfigurationKeyTable.suggestion(for: name, among: node.children.keys)
                guard isSection, suggestion == nil else {
                    throw unknown(path + [name], line: member.line, column: member.column, suggestion: suggestion)
                }
                return
            default:
                guard let child = node.children[name] else {
                    let suggestion = ConfigurationKeyTable.suggestion(for: name, among: node.children.keys)
                    throw unknown(path + [name], line: member.line, column: member.column, suggestion: suggestion)
                }
                node = child
            }
            path.append(name)
        }
        try visit(member.value, at: node, path: path, line: member.line)
    }

    private func unknown(_ path: [String], line: Int, column: Int, suggestion: String?, note: String? = nil) -> APIConfigError {
        APIConfigError(
            kind: .unknownKey, file: file, key: Self.dotted(path), expected: note, line: line, column: column,
            suggestion: suggestion.map { Self.dotted(path.dropLast() + [$0]) }
        )
    }

    /// The key for a message: its components joined by dots, each shortened and escaped.
    private static func dotted(_ path: some Collection<String>) -> String {
        path.map(ConfigJSONParser.printable).joined(separator: ".")
    }

    // MARK: - The variables

    /// The `RESOURCEFUL_…` variables that override keys: one whose name says it is meant for a
    /// key (its first word names a section, or it is one edit from a key's variable) and is no
    /// key's is an error naming the variable and the nearest one. The package's other variables
    /// (`RESOURCEFUL_CONFIG_DIR`, the `environment` storage's `RESOURCEFUL_AUTH_…`) and those of
    /// a storage kind an app brings (`RESOURCEFUL_AUTHENTICATION_VAULT_…`) are let through.
    private mutating func checkVariables(_ variables: [String: String]) throws(APIConfigError) {
        let prefix = APIConfig.environmentVariablePrefix + "_"
        let known = ConfigurationKeyTable.variables
        let services = serviceNames.map { APIConfig.environmentVariable(forKey: $0, prefixed: false) + "_" }
        // The `environment` storage's variables, under a prefix a variable chose
        // (`RESOURCEFUL_AUTHENTICATION_ENVIRONMENT_PREFIX`, or a service's), hold credentials, not keys.
        let storagePrefixes = variables.filter { $0.key.hasSuffix("AUTHENTICATION_ENVIRONMENT_PREFIX") && !$0.value.isEmpty }.map {
            $0.value + "_"
        }
        for variable in variables.keys.sorted()
        where variable.hasPrefix(prefix) && !storagePrefixes.contains(where: { variable.hasPrefix($0) }) {
            let name = String(variable.dropFirst(prefix.count))
            if name.hasPrefix("SERVICES_") {
                // A picked service's variables; those of a service the file does not describe
                // override nothing.
                // Names may share a beginning (`a` and `a_b`): the variable is a key's of any of them.
                let rest = name.dropFirst("SERVICES_".count)
                let candidates = services.filter { rest.hasPrefix($0) }.sorted { $0.count > $1.count }.map {
                    String(rest.dropFirst($0.count))
                }
                guard let longest = candidates.first else { continue }
                guard let key = candidates.lazy.compactMap({ known[$0] }).first else {
                    throw unknownVariable(variable, name: longest, strict: true)
                }
                noteOtherModule(key, variable: variable)
                continue
            }
            if let key = known[name] {
                noteOtherModule(key, variable: variable)
                continue
            }
            guard name != "CONFIG_DIR", name != "AUTH", !name.hasPrefix("AUTH_") else { continue }
            let firstWord = name.prefix { $0 != "_" }
            switch firstWord {
            case "CODING", "LOGGING", "RETRY", "HTTP", "CACHE":
                throw unknownVariable(variable, name: name, strict: true)
            case "AUTHENTICATION":
                let ownKinds = ["FILE", "ENVIRONMENT"] + ConfigurationKeyTable.modules.filter { $0.section == "authentication" }.map { $0.kind.uppercased() }
                let isKnownKind = ownKinds.contains { name.hasPrefix("AUTHENTICATION_\($0)_") }
                try checkLoose(variable, name: name, strict: isKnownKind)
            case "SHARED":
                let ownKinds = ConfigurationKeyTable.modules.filter { $0.section == "sharedState" }.map { $0.kind.uppercased() }
                let isKnownKind = ownKinds.contains { name.hasPrefix("SHARED_STATE_\($0)_") }
                try checkLoose(variable, name: name, strict: isKnownKind)
            default:
                try checkLoose(variable, name: name, strict: false)
            }
        }
    }

    private func checkLoose(_ variable: String, name: String, strict: Bool) throws(APIConfigError) {
        let error = unknownVariable(variable, name: name, strict: strict)
        if strict || error.suggestion != nil { throw error }
    }

    private func unknownVariable(_ variable: String, name: String, strict: Bool) -> APIConfigError {
        let prefix = String(variable.dropLast(name.count))
        let suggestion = ConfigurationKeyTable.suggestion(for: name, among: ConfigurationKeyTable.variables.keys)
        // A variable's name is anything but `=` and NUL: shown shortened, control characters escaped.
        let shown = ConfigJSONParser.printable(variable)
        return APIConfigError(
            kind: .unknownKey, file: file, key: shown, source: shown, suggestion: suggestion.map { ConfigJSONParser.printable(prefix + $0) }
        )
    }

    private mutating func noteOtherModule(_ key: String, variable: String) {
        let components = key.split(separator: ".")
        guard components.count > 2,
            let module = ConfigurationKeyTable.modules.first(where: { $0.section == components[0] && $0.kind == components[1] }),
            !otherModules.contains(where: { $0.module == module.name })
        else { return }
        otherModules.append(
            OtherModuleKeys(
                section: module.section, kind: APIConfig.StorageKind(rawValue: module.kind), module: module.name, key: variable, source: variable))
    }
}
