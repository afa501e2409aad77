/// Why a credential storage could not give a credential.
///
/// Its description names what was read (a file or an environment variable) and what is wrong with
/// it, never the credential.
package struct AuthenticationStorageError: Error, Sendable, Hashable, SecretFreeDescription {
    /// What kind of failure this is.
    package struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Code: Sendable, Hashable { case missing, empty, unreadable, tooLarge, invalidValue, unavailable }
        private let code: Code
        private init(_ code: Code) { self.code = code }

        /// The file, or the directory it should be in, does not exist.
        package static let missing = Kind(.missing)
        /// The file or variable is empty (after trailing newlines are trimmed).
        package static let empty = Kind(.empty)
        /// The file cannot be read: permission denied, not a regular file, or an I/O error.
        package static let unreadable = Kind(.unreadable)
        /// The file is larger than the storage accepts.
        package static let tooLarge = Kind(.tooLarge)
        /// The value holds a line break or NUL inside, or is not UTF-8, or the service name cannot
        /// name a file.
        package static let invalidValue = Kind(.invalidValue)
        /// The storage cannot be used in this program, such as the keyring without
        /// `ResourcefulKeyring`.
        package static let unavailable = Kind(.unavailable)

        /// The kind's name.
        package var description: String {
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
    package var kind: Kind
    /// What was read, such as `file /run/secrets/example-api` or
    /// `environment variable RESOURCEFUL_AUTH_EXAMPLE_API_TOKEN`.
    package var source: String
    /// What is wrong with it, such as `permission denied`.
    package var detail: String

    /// Creates an error.
    package init(kind: Kind, source: String, detail: String) {
        self.kind = kind
        self.source = source
        self.detail = detail
    }

    /// `<source>: <detail>`.
    package var description: String { "\(source): \(detail)" }
}
