import Foundation
import Logging
import PostgresNIO
import ProcessTestSupport
import ResourcefulPostgres
import Testing

/// A connection to the suite's PostgreSQL server, as the tests' instances use it: by default as
/// the cluster's superuser to the database `postgres`.
func connection(to server: PostgresServer, as role: Role? = nil, database: String = "postgres") -> PostgresClient.Configuration {
    PostgresClient.Configuration(
        host: "127.0.0.1", port: server.port, username: role?.name ?? server.username, password: role?.password ?? server.password,
        database: database, tls: .disable
    )
}

/// A login role a test made (``Role/make(_:)``), with its password.
struct Role: Sendable {
    let name: String
    let password: String

    /// A new role, `prefix` and a random part, that may log in (and create schemas in
    /// `database`, when one is named).
    static func make(_ prefix: String, creatingIn database: String? = nil) async throws -> Role {
        let role = Role(name: "\(prefix)_\(UUID().uuidString.prefix(8).lowercased())", password: UUID().uuidString)
        _ = try await rows("CREATE ROLE \(role.name) LOGIN PASSWORD '\(role.password)'")
        if let database { _ = try await rows("GRANT CREATE ON DATABASE \(database) TO \(role.name)") }
        return role
    }
}

/// A new database (a random name after `prefix`), for a test that needs one of its own.
func makeDatabase(_ prefix: String) async throws -> String {
    let name = "\(prefix)_\(UUID().uuidString.prefix(8).lowercased())"
    _ = try await rows("CREATE DATABASE \(name)")
    return name
}

extension PostgresSharedState.Options {
    /// The defaults, but a statement may take 5 s: on a loaded machine the tests check what the
    /// store keeps, not how fast it answers (``StoreOutageTests`` sets its own).
    static var patient: Self {
        var options = Self()
        options.statementTimeout = .seconds(5)
        return options
    }
}

/// The suite's server; a test outside ``PostgresTrait`` fails here.
func suiteServer() throws -> PostgresServer {
    try #require(PostgresServer.current, "the suite runs with .postgres")
}

/// Runs `body` with `count` instances of shared state (each its own client, as separate
/// instances of a fleet have), their clients running until `body` returns. Their schema is
/// prepared first (unless `prepared` is `false`, for a test of the preparing itself), so that a
/// test's statements are not the first of a suite whose many instances prepare at once: on a
/// machine busy with every suite's server, that may take longer than a statement's time.
func withInstances<T: Sendable>(
    _ count: Int,
    options: PostgresSharedState.Options = .patient,
    logger: Logger = Logger(label: "resourceful-postgres-tests"),
    prepared: Bool = true,
    _ body: @Sendable ([PostgresSharedState]) async throws -> T
) async throws -> T {
    let server = try suiteServer()
    let instances = (0..<count).map { _ in PostgresSharedState(configuration: connection(to: server), options: options, logger: logger) }
    return try await withThrowingTaskGroup(of: T?.self) { group in
        for instance in instances { group.addTask { await instance.run(); return nil } }
        defer { group.cancelAll() }
        if prepared {
            for instance in instances { try await instance.prepare() }
        }
        return try await body(instances)
    }
}

/// Runs `body` with one instance connecting as `role` (the superuser by default) to `database`,
/// its client running until `body` returns.
func withInstance<T: Sendable>(
    as role: Role? = nil,
    database: String,
    options: PostgresSharedState.Options = .patient,
    _ body: @Sendable (PostgresSharedState) async throws -> T
) async throws -> T {
    let shared = PostgresSharedState(
        configuration: connection(to: try suiteServer(), as: role, database: database), options: options,
        logger: Logger(label: "resourceful-postgres-tests"))
    return try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { await shared.run(); return nil }
        defer { group.cancelAll() }
        return try await body(shared)
    }
}

/// Runs `sql` through a client of its own (as `role`, in `database`) and returns the first column
/// of every row as text.
func rows(_ sql: String, as role: Role? = nil, database: String = "postgres") async throws -> [String] {
    let server = try suiteServer()
    let client = PostgresClient(configuration: connection(to: server, as: role, database: database))
    return try await withThrowingTaskGroup(of: [String]?.self) { group in
        group.addTask { await client.run(); return nil }
        defer { group.cancelAll() }
        var found: [String] = []
        do {
            for try await value in try await client.query(PostgresQuery(unsafeSQL: sql)).decode(String?.self) { found.append(value ?? "NULL") }
        } catch {
            // The tests' own queries hold no secret: what PostgreSQL said, in full.
            throw QueryFailed(description: String(reflecting: error))
        }
        return found
    }
}

/// A query of the tests that failed, with what PostgreSQL said.
struct QueryFailed: Error, CustomStringConvertible {
    let description: String
}
