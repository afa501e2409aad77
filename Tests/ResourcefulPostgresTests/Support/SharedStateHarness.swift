import Foundation
import Logging
import PostgresNIO
import ProcessTestSupport
import ResourcefulPostgres
import Testing

/// A connection to the suite's PostgreSQL server, as the tests' instances use it.
func connection(to server: PostgresServer) -> PostgresClient.Configuration {
    PostgresClient.Configuration(
        host: "127.0.0.1", port: server.port, username: server.username, password: server.password, database: "postgres",
        tls: .disable
    )
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
/// instances of a fleet have), their clients running until `body` returns.
func withInstances<T: Sendable>(
    _ count: Int,
    options: PostgresSharedState.Options = .patient,
    logger: Logger = Logger(label: "resourceful-postgres-tests"),
    _ body: @Sendable ([PostgresSharedState]) async throws -> T
) async throws -> T {
    let server = try suiteServer()
    let instances = (0..<count).map { _ in PostgresSharedState(configuration: connection(to: server), options: options, logger: logger) }
    return try await withThrowingTaskGroup(of: T?.self) { group in
        for instance in instances { group.addTask { await instance.run(); return nil } }
        defer { group.cancelAll() }
        return try await body(instances)
    }
}

/// Runs `sql` through a client of its own and returns the first column of every row as text.
func rows(_ sql: String) async throws -> [String] {
    let server = try suiteServer()
    let client = PostgresClient(configuration: connection(to: server))
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
