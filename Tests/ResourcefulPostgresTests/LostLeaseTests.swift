import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
@testable import ResourcefulOAuth2
@testable import ResourcefulPostgres
import ResourcefulTesting
import Testing

/// A refresh token being spent is claimed in its row, not only under the fleet's lease: an
/// instance that loses its lease while its request is out still keeps the others from spending
/// the same token.
@Suite(.postgres, .serialized)
struct LostLeaseTests {
    /// Delegates to a fleet's storage and records what each claim found.
    final class RecordingStorage: RotatingSecretStorage {
        let inner: PostgresRefreshTokenStorage
        let found = Locked([SecretClaim]())

        init(_ inner: PostgresRefreshTokenStorage) {
            self.inner = inner
        }

        func secret(named name: String) async throws -> String? { try await inner.secret(named: name) }
        func storeSecret(_ secret: String, named name: String) async throws { try await inner.storeSecret(secret, named: name) }
        func deleteSecret(named name: String) async throws -> Bool { try await inner.deleteSecret(named: name) }
        func replaceSecret(named name: String, spent: String, with new: String) async throws -> Bool {
            try await inner.replaceSecret(named: name, spent: spent, with: new)
        }
        func claimSecret(named name: String, spending secret: String, until deadline: ContinuousClock.Instant) async throws -> SecretClaim {
            let claim = try await inner.claimSecret(named: name, spending: secret, until: deadline)
            found.withLock { $0.append(claim) }
            return claim
        }
        func releaseClaim(named name: String, spending secret: String) async { await inner.releaseClaim(named: name, spending: secret) }
    }

    struct ClientSecret: SecretStorage {
        func secret(named name: String) async throws -> String? { name == "fleet-client-secret" ? FleetTokenTests.secret : nil }
    }

    /// How long a renewal may take.
    static let timeout = Duration.seconds(30)

    static var keys: SharedStateKeys {
        get throws { try SharedStateKeys(current: "k1", keys: ["k1": try #require(PostgresSharedStateFactory.keyBytes(FleetTokenTests.sealingKey))]) }
    }

    @Test("An instance whose lease connection is killed mid-request keeps the others from spending its refresh token")
    func aLostLeaseSpendsNothingTwice() async throws {
        let keys = try Self.keys
        let first = "rt-0-\(UUID().uuidString)"
        try await MockServer.withTransport { server, transport in
            let tokens = FleetRefreshTokenTests.RotatingServer(first: first)
            let release = Locked(false)
            server.route(.post, "/token") { request in
                // The first request is held until the test lets it go.
                if server.requests.filter({ $0.path == "/token" }).count == 1 {
                    while !release.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
                }
                return tokens.answer(request.body)
            }
            let settings = OAuth2Settings(clientID: "fleet", tokenEndpoint: server.baseURL.appendingPathComponent("token"), grant: .refreshToken)
            let name = OAuth2AuthenticationStorage.sharedRefreshTokenName(service: "fleet", settings: settings)
            try await withInstances(2) { instances in
                let a = RecordingStorage(PostgresRefreshTokenStorage(sharedState: instances[0], keys: keys))
                let b = RecordingStorage(PostgresRefreshTokenStorage(sharedState: instances[1], keys: keys))
                try await a.storeSecret(first, named: name)
                func storage(_ refreshTokens: RecordingStorage, _ state: PostgresSharedState) async throws -> OAuth2AuthenticationStorage {
                    try await OAuth2AuthenticationStorage(
                        settings: settings, transport: transport, clientSecret: ClientSecret(), refreshTokens: refreshTokens,
                        timeout: Self.timeout, sharedTokens: PostgresTokenCache(sharedState: state, keys: keys))
                }
                let instanceA = try await storage(a, instances[0])
                let instanceB = try await storage(b, instances[1])
                let startedA = ContinuousClock.now
                let renewedByA = Task { try await instanceA.authenticationHeader(for: "fleet") }
                try await poll { server.requests.contains { $0.path == "/token" } }
                #expect(a.found.withLock { $0 } == [.claimed])

                // A's connection, and with it the fleet's lease, is lost while its request is out.
                // The one session holding a lease row (nothing else here takes one), not waiting.
                let killed = try await rows(
                    """
                    SELECT pg_catalog.pg_terminate_backend(l.pid)::text FROM pg_catalog.pg_locks l
                    JOIN pg_catalog.pg_class c ON c.oid = l.relation JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid
                    WHERE c.relname = 'leases' AND l.granted AND l.mode = 'RowExclusiveLock' AND a.wait_event_type IS DISTINCT FROM 'Lock'
                        AND l.pid <> pg_catalog.pg_backend_pid()
                    """)
                #expect(killed == ["true"])

                // B takes the lease and finds the token claimed: it waits instead of spending it.
                let renewedByB = Task { try await instanceB.authenticationHeader(for: "fleet") }
                try await poll { b.found.withLock { $0.contains(.heldElsewhere) } }
                #expect(server.requests.filter { $0.path == "/token" }.count == 1)

                release.withLock { $0 = true }
                let headerA = try await renewedByA.value
                // A kept its token though the store could not: it did not wait out its deadline.
                #expect(ContinuousClock.now < startedA + Self.timeout)
                let headerB = try await renewedByB.value
                #expect(headerA == "Bearer acc-1")
                // B spent the token A's rotation wrote, once.
                #expect(headerB == "Bearer acc-2")
                let state = tokens.state.withLock { $0 }
                #expect(state.reused == 0 && !state.revoked && state.issued == 2)
            }
        }
        _ = try await rows("DELETE FROM resourceful.refresh_tokens RETURNING name")
        _ = try await rows("DELETE FROM resourceful.tokens RETURNING name")
    }

    @Test("A claim keeps other instances from a token until its successor is written, it is released, or it runs out")
    func aClaimIsHeldUntilRotatedReleasedOrRunOut() async throws {
        let keys = try Self.keys
        let name = "claim-\(UUID().uuidString)"
        try await withInstances(2) { instances in
            let a = PostgresRefreshTokenStorage(sharedState: instances[0], keys: keys)
            let b = PostgresRefreshTokenStorage(sharedState: instances[1], keys: keys)
            try await a.storeSecret("r0", named: name)
            #expect(try await a.claimSecret(named: name, spending: "r0", until: .now + .seconds(30)) == .claimed)
            #expect(try await b.claimSecret(named: name, spending: "r0", until: .now + .seconds(30)) == .heldElsewhere)
            #expect(try await b.claimSecret(named: name, spending: "another", until: .now + .seconds(30)) == .replaced)
            // Released (the server refused, or rotates nothing): another may claim it.
            await a.releaseClaim(named: name, spending: "r0")
            #expect(try await b.claimSecret(named: name, spending: "r0", until: .now + .seconds(30)) == .claimed)
            // A release by an instance whose claim ran out and was taken leaves the new claim.
            await a.releaseClaim(named: name, spending: "r0")
            #expect(try await a.claimSecret(named: name, spending: "r0", until: .now + .seconds(30)) == .heldElsewhere)
            // The rotation written over it ends the claim.
            #expect(try await b.replaceSecret(named: name, spent: "r0", with: "r1"))
            #expect(try await a.claimSecret(named: name, spending: "r0", until: .now + .seconds(30)) == .replaced)
            #expect(try await a.claimSecret(named: name, spending: "r1", until: .now + .seconds(30)) == .claimed)
            // A claim that ran out is taken over.
            _ = try await rows(
                "UPDATE resourceful.refresh_tokens SET claimed_until_us = resourceful.now_us() - 1 WHERE name = '\(PostgresRefreshTokenStorage.row(name))' RETURNING 1")
            #expect(try await b.claimSecret(named: name, spending: "r1", until: .now + .seconds(30)) == .claimed)
            // A claim longer than any instance writes (an altered row) is taken over.
            _ = try await rows(
                "UPDATE resourceful.refresh_tokens SET claimed_until_us = resourceful.now_us() + 86400000000 WHERE name = '\(PostgresRefreshTokenStorage.row(name))' RETURNING 1")
            #expect(try await a.claimSecret(named: name, spending: "r1", until: .now + .seconds(30)) == .claimed)
            // A login written over a claimed token is free to spend.
            try await a.storeSecret("login", named: name)
            #expect(try await a.claimSecret(named: name, spending: "login", until: .now + .seconds(30)) == .claimed)
            #expect(try await a.deleteSecret(named: name))
        }
    }
}
