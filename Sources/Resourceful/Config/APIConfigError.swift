/// Why a configuration could not be loaded. Its description names the file and the key, never a value.
public struct APIConfigError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem; compare with the static members.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Code: String, Sendable, Hashable {
            case missingFile, invalidFile, missingKey, wrongType, invalidValue
        }

        private let code: Code

        /// The configuration file does not exist.
        public static let missingFile = Kind(code: .missingFile)
        /// The configuration file is not a JSON object of the expected form.
        public static let invalidFile = Kind(code: .invalidFile)
        /// A required key has no value in the file or the environment.
        public static let missingKey = Kind(code: .missingKey)
        /// A key's value has the wrong type, such as text where a number belongs.
        public static let wrongType = Kind(code: .wrongType)
        /// A key's value has the right type but is not allowed, such as a relative base URL.
        public static let invalidValue = Kind(code: .invalidValue)

        /// The kind's name.
        public var description: String { code.rawValue }
    }

    /// What went wrong.
    public let kind: Kind
    /// The configuration file that was read.
    public let file: String
    /// The key at fault (dotted, as in the file), if one is.
    public let key: String?
    /// Where the bad value came from: the file or an environment variable's name.
    public let source: String?
    /// What is expected instead.
    public let expected: String?

    init(kind: Kind, file: String, key: String? = nil, source: String? = nil, expected: String? = nil) {
        self.kind = kind
        self.file = file
        self.key = key
        self.source = source
        self.expected = expected
    }

    /// A one-line explanation naming the file, key and source.
    public var description: String {
        var text: String
        switch kind {
        case .missingFile: text = "configuration file \(file) does not exist"
        case .invalidFile: text = "configuration file \(file) is not a JSON object of keys and values"
        case .missingKey: text = "configuration key '\(key ?? "")' is missing from \(file) and the environment"
        case .wrongType: text = "configuration key '\(key ?? "")' has the wrong type in \(source ?? file)"
        default: text = "configuration key '\(key ?? "")' has an invalid value in \(source ?? file)"
        }
        if let expected { text += ": expected \(expected)" }
        return text
    }
}
