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

    init(kind: Kind, file: String?, key: String? = nil, source: String? = nil, expected: String? = nil) {
        self.kind = kind
        self.file = file
        self.key = key
        self.source = source ?? file ?? "configuration"
        self.expected = expected
    }

    /// A one-line explanation naming the file, key and source.
    package var description: String {
        var text: String
        let key = key ?? ""
        switch kind {
        case .missingFile: text = "configuration file \(source) does not exist"
        case .invalidFile: text = "configuration file \(source) is not a JSON object of keys and values"
        case .missingKey: text = "configuration key '\(key)' is missing from \(file.map { "\($0) and the environment" } ?? source)"
        case .wrongType: text = "configuration key '\(key)' has the wrong type in \(source)"
        case .invalidValue: text = "configuration key '\(key)' has an invalid value in \(source)"
        case .unchosenFile: text = "configuration file \(source) was found in the working directory, not chosen, and names credentials to send"
        }
        if let expected { text += ": expected \(expected)" }
        return text
    }

    /// This problem as the error the public entry points throw.
    var apiError: APIError {
        APIError(kind: .invalidConfiguration, detail: description, underlying: self)
    }
}
