import Foundation
import Logging
import PostgresNIO
import ProcessTestSupport
import Resourceful
import Testing

@testable import ResourcefulPostgres

/// The schema is used only when no role the instances do not trust owns anything in it: another
/// role's function would otherwise run in the instances' sessions, with their rights.
@Suite(.postgres)
struct UntrustedSchemaTests {
    @Test("A schema another role made first is refused, and none of its code runs")
    func aSchemaAnotherRoleMadeIsRefused() async throws {
        let database = try await makeDatabase("planted")
        let intruder = try await Role.make("intruder", creatingIn: database)
        let fleet = try await Role.make("fleet", creatingIn: database)
        // The intruder applies the module's own script, lets everyone use it, and replaces the
        // clock every function reads with one that notes who called it.
        for step in PostgresSchema.steps { _ = try await rows(step, as: intruder, database: database) }
        for statement in [
            "INSERT INTO resourceful.version (version) VALUES (\(PostgresSchema.version))",
            "CREATE TABLE resourceful.called (who text)",
            "GRANT USAGE ON SCHEMA resourceful TO PUBLIC",
            "GRANT ALL ON ALL TABLES IN SCHEMA resourceful TO PUBLIC",
            """
            CREATE OR REPLACE FUNCTION resourceful.now_us() RETURNS bigint LANGUAGE sql VOLATILE AS $$
                INSERT INTO resourceful.called VALUES (current_user) RETURNING 0::bigint
            $$
            """,
        ] {
            _ = try await rows(statement, as: intruder, database: database)
        }
        let budget = try #require(RateBudget(requestsPerSecond: 100, burst: 5))
        try await withInstance(as: fleet, database: database) { shared in
            let error = await #expect(throws: PostgresSharedStateError.self) { try await shared.prepare() }
            #expect(error?.description.contains("schema resourceful (owner \(intruder.name))") == true, "\(String(describing: error))")
            // Calls go on, each instance on its own state.
            #expect(await shared.rateLimits.reserve("planted", budget: budget, maxWait: .seconds(5)) == .granted(wait: .zero))
            #expect(!shared.isAvailable)
        }
        #expect(try await rows("SELECT count(*)::text FROM resourceful.called", as: intruder, database: database) == ["0"])
        #expect(try await rows("SELECT count(*)::text FROM resourceful.rate_limits", as: intruder, database: database) == ["0"])
    }

    @Test("A function another role added to the instances' own schema is refused")
    func aFunctionAddedByAnotherRoleIsRefused() async throws {
        let database = try await makeDatabase("added")
        let fleet = try await Role.make("fleet", creatingIn: database)
        let intruder = try await Role.make("intruder")
        try await withInstance(as: fleet, database: database) { shared in try await shared.prepare() }
        // The fleet's role let another create in its schema (by mistake), and it did.
        _ = try await rows("GRANT USAGE, CREATE ON SCHEMA resourceful TO \(intruder.name)", as: fleet, database: database)
        _ = try await rows(
            "CREATE FUNCTION resourceful.now_us(p integer) RETURNS bigint LANGUAGE sql AS $$ SELECT 0::bigint $$",
            as: intruder, database: database)
        try await withInstance(as: fleet, database: database) { shared in
            let error = await #expect(throws: PostgresSharedStateError.self) { try await shared.prepare() }
            #expect(error?.description.contains("function now_us (owner \(intruder.name))") == true, "\(String(describing: error))")
        }
    }

    @Test("A trigger another role put on a table it was granted everything on is refused, and never runs")
    func aTriggerOfAnotherRoleIsRefused() async throws {
        let database = try await makeDatabase("triggered")
        let fleet = try await Role.make("fleet")
        let intruder = try await Role.make("intruder", creatingIn: database)
        let script = try String(contentsOf: PostgresSchemaFile.url, encoding: .utf8)
        for step in script.components(separatedBy: "\n-- step\n") { _ = try await rows(step, database: database) }
        for statement in [
            "INSERT INTO resourceful.version (version) VALUES (\(PostgresSchema.version))",
            "GRANT USAGE ON SCHEMA resourceful TO \(fleet.name), \(intruder.name)",
            // A grant too wide, as admins write it.
            "GRANT ALL ON ALL TABLES IN SCHEMA resourceful TO \(fleet.name), \(intruder.name)",
        ] {
            _ = try await rows(statement, database: database)
        }
        for statement in [
            "CREATE SCHEMA m",
            "CREATE TABLE m.seen (who text)",
            "GRANT USAGE ON SCHEMA m TO PUBLIC",
            "GRANT INSERT ON m.seen TO PUBLIC",
            "CREATE FUNCTION m.note() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO m.seen VALUES (current_user); RETURN NEW; END $$",
            "CREATE TRIGGER zz BEFORE INSERT OR UPDATE ON resourceful.rate_limits FOR EACH ROW EXECUTE FUNCTION m.note()",
        ] {
            _ = try await rows(statement, as: intruder, database: database)
        }
        let budget = try #require(RateBudget(requestsPerSecond: 100, burst: 5))
        try await withInstance(as: fleet, database: database) { shared in
            let error = await #expect(throws: PostgresSharedStateError.self) { try await shared.prepare() }
            let said = error?.description ?? ""
            #expect(said.contains("TRIGGER on") || said.contains("trigger zz"), "\(said)")
            #expect(await shared.rateLimits.reserve("triggered", budget: budget, maxWait: .seconds(5)) == .granted(wait: .zero))
        }
        #expect(try await rows("SELECT count(*)::text FROM m.seen", as: intruder, database: database) == ["0"])
    }

    @Test("A schema a superuser applied from Schema.sql serves a role that may not create it")
    func aSchemaAppliedByASuperuserIsUsed() async throws {
        let database = try await makeDatabase("applied")
        let fleet = try await Role.make("fleet")
        let script = try String(contentsOf: PostgresSchemaFile.url, encoding: .utf8)
        for step in script.components(separatedBy: "\n-- step\n") { _ = try await rows(step, database: database) }
        for statement in [
            "INSERT INTO resourceful.version (version) VALUES (\(PostgresSchema.version))",
            "GRANT USAGE ON SCHEMA resourceful TO \(fleet.name)",
            "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA resourceful TO \(fleet.name)",
        ] {
            _ = try await rows(statement, database: database)
        }
        let budget = try #require(RateBudget(requestsPerSecond: 100, burst: 5))
        try await withInstance(as: fleet, database: database) { shared in
            try await shared.prepare()
            #expect(await shared.rateLimits.reserve("applied", budget: budget, maxWait: .seconds(5)) == .granted(wait: .zero))
            #expect(shared.isAvailable)
        }
        #expect(try await rows("SELECT upstream FROM resourceful.rate_limits", database: database) == ["applied"])
    }

    @Test("The instances' sessions find PostgreSQL's own functions and operators first")
    func theSessionsPathHoldsOnlyTheCatalog() async throws {
        let server = try suiteServer()
        let shared = PostgresSharedState(configuration: connection(to: server), logger: Logger(label: "resourceful-postgres-tests"))
        let path: String = try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask { await shared.run(); return nil }
            defer { group.cancelAll() }
            var found = ""
            for try await value in try await shared.client.query("SHOW search_path").decode(String.self) { found = value }
            return found
        }
        #expect(path == "pg_catalog, pg_temp")
    }
}

/// `Schema.sql`, beside the module's sources.
enum PostgresSchemaFile {
    static let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/ResourcefulPostgres/Schema.sql")
}
