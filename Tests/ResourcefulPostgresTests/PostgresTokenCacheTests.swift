import Foundation
import ProcessTestSupport
import Resourceful
import ResourcefulPostgres
import Testing

/// Tokens kept sealed for the fleet: read by an instance with the keys, under a rotated key too,
/// never by one without them; a refused token is replaced; a token server's error goes out as it
/// came, and nothing is kept.
@Suite(.postgres)
struct PostgresTokenCacheTests {
    static let k1 = Array(repeating: UInt8(0x11), count: 32)
    static let k2 = Array(repeating: UInt8(0x22), count: 32)

    struct ServerSaidNo: Error {}

    @Test("A token one instance kept is read by another with the keys, also after a rotation, and by none without them")
    func aKeptTokenIsReadWithTheKeysOnly() async throws {
        let name = "token \(UUID())"
        let deadline = ContinuousClock.now + .seconds(30)
        try await withInstances(3) { instances in
            let before = PostgresTokenCache(sharedState: instances[0], keys: try SharedStateKeys(current: "k1", keys: ["k1": Self.k1]))
            let rotated = PostgresTokenCache(
                sharedState: instances[1], keys: try SharedStateKeys(current: "k2", keys: ["k1": Self.k1, "k2": Self.k2]))
            let stranger = PostgresTokenCache(sharedState: instances[2], keys: try SharedStateKeys(current: "k2", keys: ["k2": Self.k2]))
            let kept = try await before.withLease(named: name, refusing: nil, deadline: deadline) {
                SharedToken(header: "Bearer first-token", renewIn: .seconds(600), scope: "read")
            }
            #expect(kept.header == "Bearer first-token")
            let read = await rotated.token(named: name, deadline: deadline)
            #expect(read?.header == "Bearer first-token" && read?.scope == "read")
            #expect(read.map { $0.renewIn > .seconds(590) && $0.renewIn <= .seconds(600) } == true)
            #expect(await stranger.token(named: name, deadline: deadline) == nil)
            // Under the lease a kept token is taken, not asked for again; a refused one is replaced.
            let again = try await rotated.withLease(named: name, refusing: nil, deadline: deadline) {
                Issue.record("asked although a token was kept")
                return SharedToken(header: "Bearer unwanted", renewIn: .seconds(600))
            }
            #expect(again.header == "Bearer first-token")
            let replaced = try await rotated.withLease(named: name, refusing: "Bearer first-token", deadline: deadline) {
                SharedToken(header: "Bearer second-token", renewIn: .seconds(600))
            }
            #expect(replaced.header == "Bearer second-token")
            #expect(await before.token(named: name, deadline: deadline) == nil, "sealed under k2 now, which it lacks")
        }
        let cells = try await rows("SELECT encode(sealed, 'hex') || ' ' || key_id FROM resourceful.tokens")
        #expect(!cells.contains { $0.contains("token") || $0.contains(Data("second".utf8).map { String(format: "%02x", $0) }.joined()) })
    }

    @Test("A token server's error goes out as it came, and nothing is kept")
    func aFetchErrorPassesThrough() async throws {
        let name = "failing \(UUID())"
        try await withInstances(1) { instances in
            let cache = PostgresTokenCache(sharedState: instances[0], keys: try SharedStateKeys(current: "k1", keys: ["k1": Self.k1]))
            await #expect(throws: ServerSaidNo.self) {
                _ = try await cache.withLease(named: name, refusing: nil, deadline: .now + .seconds(30)) { throw ServerSaidNo() }
            }
            #expect(await cache.token(named: name, deadline: .now + .seconds(30)) == nil)
            #expect(instances[0].isAvailable)
        }
    }
}
