import CLibSecret

/// The Secret Service proxy on the session bus, for one operation.
struct KeyringConnection {
    let proxy: GObjectReference

    var service: UnsafeMutablePointer<SecretService> {
        proxy.pointer.assumingMemoryBound(to: SecretService.self)
    }

    /// Gets libsecret's shared Secret Service proxy with a session open.
    ///
    /// The session bus connection GLib shares in a process exits the process when the bus closes;
    /// this turns that off first, so a bus going away is an error, not the end of a server.
    static func open(operation: String, cancellable: UnsafeMutablePointer<GCancellable>) throws(KeyringError) -> KeyringConnection {
        var error: UnsafeMutablePointer<GError>?
        guard let bus = g_bus_get_sync(G_BUS_TYPE_SESSION, cancellable, &error) else {
            throw GLibError.take(error, operation: operation, connecting: true)
        }
        g_dbus_connection_set_exit_on_close(bus, 0)
        g_object_unref(gpointer(bus))
        guard let service = secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, cancellable, &error) else {
            throw GLibError.take(error, operation: operation)
        }
        return KeyringConnection(proxy: GObjectReference(taking: gpointer(service)))
    }

    /// Throws ``KeyringError/Kind/locked`` when the default collection is locked.
    func requireUnlocked(_ operation: String, cancellable: UnsafeMutablePointer<GCancellable>) throws(KeyringError) {
        var error: UnsafeMutablePointer<GError>?
        let collection = secret_collection_for_alias_sync(service, "default", SECRET_COLLECTION_NONE, cancellable, &error)
        if error != nil { throw GLibError.take(error, operation: operation) }
        guard let collection else { return }
        defer { g_object_unref(gpointer(collection)) }
        if secret_collection_get_locked(collection) != 0 {
            throw KeyringError(.locked, operation: operation, message: "the default collection is locked")
        }
    }
}
