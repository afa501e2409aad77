import CLibSecret
import Foundation

/// Secrets in the Linux keyring (a Secret Service such as gnome-keyring, through libsecret),
/// stored by service and account.
///
/// An item is identified by two string attributes, `service` and `account`, whatever its schema
/// (the `xdg:schema` attribute): a secret stored by another tool is found, so
/// `secret-tool store --label=API service example-api account ada` is a way to provide one.
/// ``store(_:service:account:label:)`` writes items under its `schemaName` and removes
/// any other item with the same two attributes, so one secret is left for each pair;
/// ``delete(service:account:)`` removes them all.
///
/// ```swift
/// let keyring = Keyring()
/// try await keyring.store("t0k3n", service: "example-api", account: "ada")
/// let token = try await keyring.lookup(service: "example-api", account: "ada")   // "t0k3n"
/// try await keyring.delete(service: "example-api", account: "ada")
/// ```
///
/// The keyring is reached over the D-Bus session bus named by `DBUS_SESSION_BUS_ADDRESS`. Each
/// call runs off Swift's cooperative thread pool and is bounded by its `timeout`: a
/// missing bus, a missing, locked or frozen Secret Service is a ``KeyringError``, never a hang,
/// and a bus that goes away never ends the process.
public struct Keyring: Sendable {
    /// The libsecret schema name items are stored under (their `xdg:schema` attribute).
    let schemaName: String
    /// The most one call may take.
    let timeout: Duration
    /// The environment checked for `DBUS_SESSION_BUS_ADDRESS`; `nil` for the process's.
    let environment: [String: String]?

    /// Creates a keyring; nothing is contacted until the first call.
    ///
    /// - Parameters:
    ///   - schemaName: The libsecret schema name items are stored under (their `xdg:schema`
    ///     attribute). Lookups and deletions match items of any schema by `service` and `account`,
    ///     so items stored by `secret-tool` or another program are found.
    ///   - timeout: The most one call may take.
    ///   - environment: The environment checked for `DBUS_SESSION_BUS_ADDRESS` before the bus is
    ///     contacted; `nil` for the process's. A call fails with ``KeyringError/Kind/noSessionBus``
    ///     at once when the variable is missing.
    public init(
        schemaName: String = "org.resourceful.Credential",
        timeout: Duration = .seconds(5),
        environment: [String: String]? = nil
    ) {
        self.schemaName = schemaName
        self.timeout = timeout
        self.environment = environment
    }

    /// Stores `secret` for `service` and `account`, replacing any secret stored for them.
    ///
    /// - Parameter label: The name keyring tools show; `Resourceful: <service> (<account>)` by default.
    public func store(_ secret: String, service: String, account: String, label: String? = nil) async throws(KeyringError) {
        let label = label ?? "Resourceful: \(service) (\(account))"
        let schemaName = self.schemaName
        try await call("store") { connection, cancellable throws(KeyringError) in
            try connection.requireUnlocked("store", cancellable: cancellable)
            let schema = resourceful_schema_new(schemaName)
            defer { secret_schema_unref(schema) }
            try withAttributes(service: service, account: account) { attributes throws(KeyringError) in
                let value = secret_value_new(secret, -1, "text/plain")
                defer { secret_value_unref(gpointer(value)) }
                var error: UnsafeMutablePointer<GError>?
                guard secret_service_store_sync(connection.service, schema, attributes, nil, label, value, cancellable, &error) != 0 else {
                    throw GLibError.take(error, operation: "store")
                }
                // An item for the same service and account made by another tool would be found
                // instead of this one half the time: one secret per service and account.
                guard resourceful_delete_other_schemas(connection.service, schemaName, attributes, cancellable, &error) != 0 else {
                    throw GLibError.take(error, operation: "store")
                }
            }
        }
    }

    /// The secret stored for `service` and `account`, or `nil` when there is none.
    ///
    /// - Throws: ``KeyringError``; a locked collection is ``KeyringError/Kind/locked``, never `nil`.
    public func lookup(service: String, account: String) async throws(KeyringError) -> String? {
        try await call("lookup") { connection, cancellable throws(KeyringError) -> String? in
            let schema = resourceful_any_schema_new()
            defer { secret_schema_unref(schema) }
            let found = try withAttributes(service: service, account: account) { attributes throws(KeyringError) -> String? in
                var error: UnsafeMutablePointer<GError>?
                guard let value = secret_service_lookup_sync(connection.service, schema, attributes, cancellable, &error) else {
                    if error != nil { throw GLibError.take(error, operation: "lookup") }
                    return nil
                }
                defer { secret_value_unref(gpointer(value)) }
                var length = 0
                guard let bytes = secret_value_get(value, &length) else { return "" }
                return String(decoding: UnsafeRawBufferPointer(start: bytes, count: length), as: UTF8.self)
            }
            if found == nil {
                // A locked collection answers "nothing found" without an error: ask it.
                try connection.requireUnlocked("lookup", cancellable: cancellable)
            }
            return found
        }
    }

    /// Deletes the secret stored for `service` and `account`.
    ///
    /// - Returns: Whether there was one.
    @discardableResult
    public func delete(service: String, account: String) async throws(KeyringError) -> Bool {
        try await call("delete") { connection, cancellable throws(KeyringError) -> Bool in
            try connection.requireUnlocked("delete", cancellable: cancellable)
            let schema = resourceful_any_schema_new()
            defer { secret_schema_unref(schema) }
            return try withAttributes(service: service, account: account) { attributes throws(KeyringError) -> Bool in
                var error: UnsafeMutablePointer<GError>?
                let removed = secret_service_clear_sync(connection.service, schema, attributes, cancellable, &error) != 0
                if error != nil { throw GLibError.take(error, operation: "delete") }
                return removed
            }
        }
    }

    /// Runs `body` with an open connection, under the configured time limit.
    private func call<T: Sendable>(
        _ operation: String,
        _ body: @escaping @Sendable (KeyringConnection, UnsafeMutablePointer<GCancellable>) throws(KeyringError) -> T
    ) async throws(KeyringError) -> T {
        let environment = self.environment ?? ProcessInfo.processInfo.environment
        guard let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty else {
            throw KeyringError(.noSessionBus, operation: operation, message: "DBUS_SESSION_BUS_ADDRESS is not set")
        }
        return try await KeyringCall.run(operation, timeout: timeout) { cancellable throws(KeyringError) in
            let connection = try KeyringConnection.open(operation: operation, cancellable: cancellable)
            return try body(connection, cancellable)
        }
    }
}

/// Runs `body` with a libsecret attribute table for `service` and `account`.
private func withAttributes<T>(
    service: String,
    account: String,
    _ body: (OpaquePointer) throws(KeyringError) -> T
) throws(KeyringError) -> T {
    let result: Result<T, KeyringError> = service.withCString { service in
        account.withCString { account in
            let attributes = resourceful_attributes_new(service, account)
            defer { g_hash_table_unref(attributes) }
            guard let attributes else { return .failure(KeyringError(.other, operation: "attributes", message: "out of memory")) }
            do throws(KeyringError) {
                return .success(try body(attributes))
            } catch {
                return .failure(error)
            }
        }
    }
    return try result.get()
}
