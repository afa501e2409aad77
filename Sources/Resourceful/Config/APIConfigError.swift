/// Why a configuration could not be loaded or used: the `underlying` error of an
/// ``APIError/Kind/invalidConfiguration``. Its description names the file and the key, never a value.
package struct APIConfigError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem.
    package enum Kind: String, Sendable, Hashable {
        /// The configuration file does not exist.
        case missingFile
        /// The configuration file is not a JSON object of the expected form.
        case invalidFile
        /// A required key has no value in the file or the environment.
        case missingKey
        /// A key's value has the wrong type, such as text where a number belongs.
        case wrongType
        /// A key's value has the right type but is not allowed, such as a relative base URL.
        case invalidValue
        /// The file was found in the working directory's `Configs` folder rather than chosen,
        /// and names credentials to send: whoever wrote that folder (a cloned repository) would
        /// choose both a secret and the host it goes to.
        case unchosenFile
        /// The file is not standard JSON (RFC 8259): a comment, a trailing comma, single
        /// quotes, `NaN`, a key set twice in one object; ``line`` and ``column`` say where.
        case notStandardJSON
        /// A key (or a `RESOURCEFUL_…` environment variable) that no part of the configuration
        /// reads, such as a misspelt one; ``suggestion`` is the known key nearest to it, if one is
        /// near enough.
        case unknownKey
        /// The file has a mistake (``line`` and ``column`` say where) but was reached through a
        /// symbolic link from a folder that was not chosen (the working directory's `Configs`):
        /// the link may lead to any JSON file the user can read, so no key or name of it is shown.
        case unshownMistake
        /// An environment variable (``source``) overrides ``key`` in a way that would move where
        /// the file's credentials go (a base URL on another origin, an OAuth 2 endpoint, a proxy)
        /// or lower the TLS trust they are sent over: a variable may be set by something other
        /// than the user who chose the file, so it takes none of the file's credentials.
        case movedByVariable
        /// The file system holding the configuration file did not answer within
        /// ``APIConfig/fileWait`` (a hung network mount).
        case unanswered
    }

    /// What went wrong.
    package let kind: Kind
    /// The key at fault (dotted, as in the file), if one is.
    package let key: String?
    /// Where the problem is: the configuration file, the environment variable that set the bad
    /// value, or `configuration` for a value from an app's own `ConfigReader`.
    package let source: String
    /// The configuration file that was read, if one was.
    package let file: String?
    /// What is expected instead.
    package let expected: String?
    /// The line of the file where the problem is (1-based), when it is known.
    package let line: Int?
    /// The column of that line (1-based, in bytes), when it is known.
    package let column: Int?
    /// For an unknown key, the known key (or variable) nearest to it: what was likely meant.
    package let suggestion: String?

    init(
        kind: Kind, file: String?, key: String? = nil, source: String? = nil, expected: String? = nil,
        line: Int? = nil, column: Int? = nil, suggestion: String? = nil
    ) {
        self.kind = kind
        self.file = file
        self.key = key
        self.source = source ?? file ?? "configuration"
        self.expected = expected
        self.line = line
        self.column = column
        self.suggestion = suggestion
    }

    /// A one-line explanation naming the file, key and source.
    package var description: String {
        var text: String
        let key = key ?? ""
        let place = line.map { line in " (line \(line)" + (column.map { ", column \($0)" } ?? "") + ")" } ?? ""
        switch kind {
        case .missingFile: text = "configuration file \(source) does not exist"
        case .invalidFile: text = "configuration file \(source) is not a JSON object of keys and values"
        case .missingKey: text = "configuration key '\(key)' is missing from \(file.map { "\($0) and the environment" } ?? source)"
        case .wrongType: text = "configuration key '\(key)' has the wrong type in \(source)"
        case .invalidValue: text = "configuration key '\(key)' has an invalid value in \(source)"
        case .unchosenFile: text = "configuration file \(source) was found in the working directory, not chosen, and names credentials to send"
        case .movedByVariable:
            text = file.map { "environment variable \(source) overrides configuration key '\(key)' of \($0)" }
                ?? "environment variable \(source) sets configuration key '\(key)' (no configuration file is read)"
        case .unshownMistake:
            return "configuration file \(source) has a mistake\(place), but it is reached through a symbolic link from a folder that was not chosen, so nothing of it is shown: "
                + "choose the folder (\(APIConfig.directoryVariable) set to an absolute path, or the tool's --config-directory) to see it"
        case .unanswered:
            return "configuration file \(source): its file system did not answer within \(expected ?? "the time allowed") (a file system that does not answer, such as a hung network mount)"
        case .notStandardJSON: return "configuration file \(source) is not standard JSON\(place): \(expected ?? "a syntax error")"
        case .unknownKey:
            let what = source == key ? "environment variable \(key) is not one the configuration reads" : "configuration key '\(key)' in \(source)\(place) is not a known key"
            if let suggestion { return what + ": did you mean " + (source == key ? suggestion : "'\(suggestion)'") + "?" }
            return what + (expected.map { " (\($0))" } ?? "")
        }
        if let expected { text += "\(place): expected \(expected)" } else { text += place }
        return text
    }

    /// This problem as the error the public entry points throw.
    var apiError: APIError {
        APIError(kind: .invalidConfiguration, detail: description, underlying: self)
    }
}
