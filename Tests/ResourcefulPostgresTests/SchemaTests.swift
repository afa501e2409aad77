import Foundation
import ProcessTestSupport
import Resourceful
import Testing

@testable import ResourcefulPostgres

@Suite(.postgres)
struct SchemaTests {
    @Test("Instances starting at once create the schema once, at its version")
    func instancesStartingAtOnceMigrateOnce() async throws {
        try await withInstances(6, prepared: false) { instances in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for instance in instances { group.addTask { try await instance.prepare() } }
                try await group.waitForAll()
            }
        }
        #expect(try await rows("SELECT version::text FROM resourceful.version") == ["\(PostgresSchema.version)"])
        let tables = try await rows("SELECT tablename::text FROM pg_tables WHERE schemaname = 'resourceful' ORDER BY 1")
        #expect(tables == ["breakers", "http_cache", "leases", "rate_limits", "refresh_tokens", "tokens", "version"])
        // Nothing of the module's outside its schema.
        #expect(try await rows("SELECT count(*)::text FROM pg_class WHERE relname LIKE 'resourceful%'") == ["0"])
        // A later instance finds the version and changes nothing.
        try await withInstances(1, prepared: false) { try await $0[0].prepare() }
        #expect(try await rows("SELECT count(*)::text FROM resourceful.version") == ["1"])
    }

    @Test("A schema dropped under a running instance (a database restored) is made again by its next statements")
    func aDroppedSchemaIsMadeAgain() async throws {
        let database = try await makeDatabase("restored")
        let budget = try #require(RateBudget(requestsPerSecond: 100, burst: 5))
        try await withInstance(database: database) { shared in
            // The schema's first making has its own time, not a call's: the drop must find it made.
            try await shared.prepare()
            #expect(await shared.rateLimits.reserve("first", budget: budget, maxWait: .seconds(5)) == .granted(wait: .zero))
            _ = try await rows("DROP SCHEMA resourceful CASCADE", database: database)
            let deadline = ContinuousClock.now + .seconds(60)
            var found: [String] = []
            while ContinuousClock.now < deadline {
                // Each call has its place all the same, from memory while the store is being made
                // again (its wait long enough for the schema's statements on a loaded machine).
                let place = await shared.rateLimits.reserve("again", budget: budget, maxWait: .seconds(30))
                #expect(place == .granted(wait: .zero), "\(place)")
                found = (try? await rows("SELECT upstream FROM resourceful.rate_limits", database: database)) ?? []
                if found == ["again"] { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(found == ["again"])
            #expect(shared.isAvailable)
        }
    }

    @Test("Schema.sql, for those who apply it themselves, holds the statements the module applies")
    func theSQLFileIsWhatTheModuleApplies() throws {
        #expect(try String(contentsOf: PostgresSchemaFile.url, encoding: .utf8) == PostgresSchema.script + "\n")
        #expect(PostgresSchema.steps.count == 22)
    }
}
