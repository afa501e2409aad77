public import Resourceful

/// Why a keyring operation failed, with a hint on what to do. Never holds a secret.
public struct KeyringError: Error, Sendable, CustomStringConvertible, SecretFreeDescription {
    /// The kind of failure; compare with the static members.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Code: String, Sendable, Hashable {
            case noSessionBus, noSecretService, locked, timedOut, cancelled, other
        }

        private let code: Code

        /// No D-Bus session bus: `DBUS_SESSION_BUS_ADDRESS` is unset or nothing answers there.
        public static let noSessionBus = Kind(code: .noSessionBus)
        /// The bus has no Secret Service (`org.freedesktop.secrets`), such as gnome-keyring.
        public static let noSecretService = Kind(code: .noSecretService)
        /// The keyring's collection is locked, so its secrets cannot be read or written.
        public static let locked = Kind(code: .locked)
        /// The Secret Service did not answer within the keyring's `timeout`.
        public static let timedOut = Kind(code: .timedOut)
        /// The calling task was cancelled.
        public static let cancelled = Kind(code: .cancelled)
        /// Any other failure; the description names the GLib domain and code.
        public static let other = Kind(code: .other)

        /// The kind's name.
        public var description: String { code.rawValue }
    }

    /// What went wrong.
    public let kind: Kind
    /// The operation that failed: `store`, `lookup` or `delete`.
    package let operation: String
    /// The GLib error domain, for ``Kind/other``.
    package let domain: String?
    /// The GLib error code, for ``Kind/other``.
    package let code: Int?
    /// The message of the underlying error (from D-Bus or libsecret; never a secret).
    package let message: String?

    init(_ kind: Kind, operation: String, domain: String? = nil, code: Int? = nil, message: String? = nil) {
        self.kind = kind
        self.operation = operation
        self.domain = domain
        self.code = code
        self.message = message
    }

    /// What a user can do about it.
    package var hint: String {
        switch kind {
        case .noSessionBus:
            "start a D-Bus session bus (dbus-run-session, or log in to a desktop session) and export DBUS_SESSION_BUS_ADDRESS"
        case .noSecretService:
            "install and start a Secret Service such as gnome-keyring (apt-get install gnome-keyring), "
                + "or use another AuthenticationStorage on headless servers"
        case .locked:
            "unlock the keyring, for example by logging in to the desktop or with `gnome-keyring-daemon --unlock`"
        case .timedOut:
            "the Secret Service may be frozen or waiting on a prompt; check that gnome-keyring is running and unlocked"
        case .cancelled:
            "the operation was cancelled by its caller"
        default:
            "see the message for details"
        }
    }

    /// A one-line explanation with the hint.
    public var description: String {
        var text = "keyring \(operation) failed: \(kind)"
        if let domain, let code { text += " (\(domain) \(code))" }
        if let message, !message.isEmpty { text += ": \(message)" }
        return text + " — \(hint)"
    }
}
