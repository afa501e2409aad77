/// Why a credential storage could not give a credential.
///
/// Its description names what was read (a file or an environment variable) and what is wrong with
/// it, never the credential.
package struct AuthenticationStorageError: Error, Sendable, Hashable, SecretFreeDescription {
    /// What kind of failure this is.
    package enum Kind: String, Sendable, Hashable {
        /// The file, or the directory it should be in, does not exist.
        case missing
        /// The file or variable is empty (after trailing newlines are trimmed).
        case empty
        /// The file cannot be read: permission denied, not a regular file, or an I/O error.
        case unreadable
        /// The file is larger than the storage accepts.
        case tooLarge
        /// The value holds a line break or NUL inside, or is not UTF-8, or the service name cannot
        /// name a file.
        case invalidValue
        /// The storage cannot be used in this program, such as the keyring without
        /// `ResourcefulKeyring`.
        case unavailable
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
