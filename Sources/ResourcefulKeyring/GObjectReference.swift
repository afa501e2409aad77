import CLibSecret

/// One strong reference to a GObject, released when this wrapper is.
///
/// Sendable by construction: GObject reference counts are atomic, and the objects held here —
/// `GCancellable`, `GDBusConnection` and `SecretService` proxies — are documented by GLib and
/// libsecret as safe to use from several threads (`g_cancellable_cancel`, D-Bus calls on a shared
/// connection and proxy). The pointer itself is never changed after creation.
final class GObjectReference: @unchecked Sendable {
    let pointer: gpointer

    /// Takes over a reference the caller owns (a "transfer full" return value).
    init(taking pointer: gpointer) {
        self.pointer = pointer
    }

    deinit {
        g_object_unref(pointer)
    }
}
