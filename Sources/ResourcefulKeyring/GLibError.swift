import CLibSecret

/// Turns a `GError` into a ``KeyringError`` and frees it.
enum GLibError {
    static func take(_ error: UnsafeMutablePointer<GError>?, operation: String, connecting: Bool = false) -> KeyringError {
        guard let error else { return KeyringError(.other, operation: operation, message: "failed without an error") }
        defer { g_error_free(error) }
        let domain = error.pointee.domain
        let code = Int(error.pointee.code)
        let message = error.pointee.message.map { String(cString: $0) }
        let domainName = g_quark_to_string(domain).map { String(cString: $0) }

        if domain == g_io_error_quark(), code == Int(G_IO_ERROR_CANCELLED.rawValue) {
            return KeyringError(.cancelled, operation: operation, message: message)
        }
        if domain == secret_error_get_quark(), code == Int(SECRET_ERROR_IS_LOCKED.rawValue) {
            return KeyringError(.locked, operation: operation, message: message)
        }
        if domain == g_dbus_error_quark() {
            let remote = g_dbus_error_get_remote_error(error).map { name in
                defer { g_free(name) }
                return String(cString: name)
            }
            switch remote {
            case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
                return KeyringError(.noSecretService, operation: operation, message: message)
            case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout":
                return KeyringError(.timedOut, operation: operation, message: message)
            default:
                break
            }
        }
        if connecting {
            return KeyringError(.noSessionBus, operation: operation, domain: domainName, code: code, message: message)
        }
        return KeyringError(.other, operation: operation, domain: domainName, code: code, message: message)
    }
}
