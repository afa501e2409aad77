/// Why a credential storage could not give a credential.
///
/// Its description names what was read (a file or an environment variable) and what is wrong with
/// it, never the credential.
public struct AuthenticationStorageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Code: Sendable, Hashable { case missing, empty, unreadable, tooLarge, invalidValue, unavailable }
        private let code: Code
        private init(_ code: Code) { self.code = code }

        /// The file, or the directory it should be in, does not exist.
        public static let missing = Kind(.missing)
        /// The file or variable is empty (after trailing newlines are trimmed).
        public static let empty = Kind(.empty)
        /// The file cannot be read: permission denied, not a regular file, or an I/O error.
        public static let unreadable = Kind(.unreadable)
        /// The file is larger than the storage accepts.
        public static let tooLarge = Kind(.tooLarge)
        /// The value holds a line break or NUL inside, or is not UTF-8, or the service name cannot
        /// name a file.
        public static let invalidValue = Kind(.invalidValue)
        /// The storage cannot be used in this program, such as the keyring without
        /// `ResourcefulKeyring`.
        public static let unavailable = Kind(.unavailable)

        /// The kind's name.
        public var description: String {
            switch code {
            case .missing: "missing"
            case .empty: "empty"
            case .unreadable: "unreadable"
            case .tooLarge: "tooLarge"
            case .invalidValue: "invalidValue"
            case .unavailable: "unavailable"
            }
        }
    }

    /// What kind of failure this is.
    public var kind: Kind
    /// What was read, such as `file /run/secrets/example-api` or
    /// `environment variable RESOURCEFUL_AUTH_EXAMPLE_API_TOKEN`.
    public var source: String
    /// What is wrong with it, such as `permission denied`.
    public var detail: String

    /// Creates an error.
    public init(kind: Kind, source: String, detail: String) {
        self.kind = kind
        self.source = source
        self.detail = detail
    }

    /// `<source>: <detail>`.
    public var description: String { "\(source): \(detail)" }
}
