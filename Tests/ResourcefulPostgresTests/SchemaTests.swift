import Foundation
import ProcessTestSupport
import Testing

@testable import ResourcefulPostgres

@Suite(.postgres)
struct SchemaTests {
    @Test("Instances starting at once create the schema once, at its version")
    func instancesStartingAtOnceMigrateOnce() async throws {
        try await withInstances(6) { instances in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for instance in instances { group.addTask { try await instance.prepare() } }
                try await group.waitForAll()
            }
        }
        #expect(try await rows("SELECT version::text FROM resourceful_schema") == ["\(PostgresSchema.version)"])
        let tables = try await rows("SELECT tablename::text FROM pg_tables WHERE tablename LIKE 'resourceful%' ORDER BY 1")
        #expect(tables == ["resourceful_breakers", "resourceful_http_cache", "resourceful_rate_limits", "resourceful_refresh_tokens", "resourceful_schema", "resourceful_tokens"])
        // A later instance finds the version and changes nothing.
        try await withInstances(1) { try await $0[0].prepare() }
        #expect(try await rows("SELECT count(*)::text FROM resourceful_schema") == ["1"])
    }

    @Test("Schema.sql, for those who apply it themselves, holds the statements the module applies")
    func theSQLFileIsWhatTheModuleApplies() throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/ResourcefulPostgres/Schema.sql")
        #expect(try String(contentsOf: file, encoding: .utf8) == PostgresSchema.script + "\n")
        #expect(PostgresSchema.steps.count == 12)
    }
}
