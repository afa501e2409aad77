import Foundation
import Logging
import PostgresNIO
import ProcessTestSupport
@testable import ResourcefulPostgres
import Testing

/// Rows nobody will read again are removed without a job of the user's: tokens long past their
/// renewal and lease rows nobody took for ten minutes, never a token still to be read nor a lease
/// an instance holds.
@Suite(.postgres)
struct CleanUpTests {
    @Test func oldTokenAndLeaseRowsGoAndThoseInUseStay() async throws {
        let tag = UUID().uuidString
        // An instance made ready: the schema is there.
        try await withInstances(1) { _ in }
        let old = "resourceful.now_us() - 1200000000"
        _ = try await rows(
            """
            INSERT INTO resourceful.tokens (name, key_id, sealed, renew_at_us, touched_us) VALUES
                ('old \(tag)', 'k', '\\x00', \(old), \(old)),
                ('due soon \(tag)', 'k', '\\x00', resourceful.now_us() + 600000000, \(old)),
                ('replaced now \(tag)', 'k', '\\x00', \(old), resourceful.now_us()),
                ('being replaced \(tag)', 'k', '\\x00', \(old), \(old))
            RETURNING name
            """)
        _ = try await rows(
            """
            INSERT INTO resourceful.leases (name, taken_us) VALUES
                ('old \(tag)', \(old)), ('held \(tag)', \(old)), ('taken now \(tag)', resourceful.now_us())
            RETURNING name
            """)
        let logger = Logger(label: "clean-up-tests")
        let locker = PostgresClient(configuration: connection(to: try suiteServer()))
        // A clean-up that waited for a locked row would fail here, not hang.
        var cleaning = connection(to: try suiteServer())
        cleaning.options.additionalStartupParameters = [("lock_timeout", "5000")]
        let cleaner = PostgresClient(configuration: cleaning)
        let (locked, nowLocked) = AsyncStream<Bool>.makeStream()
        let (released, release) = AsyncStream<Void>.makeStream()
        let leases = try await withThrowingTaskGroup(of: Void.self) { clients in
            clients.addTask { await locker.run() }
            clients.addTask { await cleaner.run() }
            defer { clients.cancelAll() }
            // An instance holds the old lease 'held': its row is locked, and stays. The
            // transaction ends (and is waited for) while its client still runs.
            let holder = Task {
                // Ended however the transaction ends, so that the wait below ends too.
                defer { nowLocked.finish() }
                try await locker.withTransaction(logger: logger) { session in
                    let name = "held \(tag)"
                    var found = false
                    for try await _ in try await session.query("SELECT 1 FROM resourceful.leases WHERE name = \(name) FOR UPDATE", logger: logger) {
                        found = true
                    }
                    // A lease holder writing its token: that row is locked too.
                    let replacing = "being replaced \(tag)"
                    var writing = false
                    for try await _ in try await session.query("SELECT 1 FROM resourceful.tokens WHERE name = \(replacing) FOR UPDATE", logger: logger) {
                        writing = true
                    }
                    found = found && writing
                    nowLocked.yield(found)
                    for await _ in released { break }
                }
            }
            defer { release.finish() }
            var found: Bool?
            for await row in locked {
                found = row
                break
            }
            try #require(found == true, "the lease row could not be locked")
            try await PostgresStore.cleanUp(cleaner, logger: logger)
            // Read while the lease is still held.
            let leases = try await rows("SELECT name FROM resourceful.leases WHERE name LIKE '% \(tag)' ORDER BY name")
            release.finish()
            try await holder.value
            return leases
        }
        #expect(leases == ["held \(tag)", "taken now \(tag)"])
        let tokens = try await rows("SELECT name FROM resourceful.tokens WHERE name LIKE '% \(tag)' ORDER BY name")
        #expect(tokens == ["being replaced \(tag)", "due soon \(tag)", "replaced now \(tag)"])
    }
}
