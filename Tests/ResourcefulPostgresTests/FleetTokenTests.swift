import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `client_credentials` tokens shared by several OS processes through the suite's PostgreSQL,
/// against a token server that counts what it is asked.
@Suite(.postgres, .serialized)
struct FleetTokenTests {
    static let secret = "fleet-client-secret-\(UUID().uuidString)"
    static let sealingKey = (0..<32).map { String(format: "%02x", ($0 * 7 + 3) & 0xFF) }.joined()
    static var environment: [String: String] {
        ["RESOURCEFUL_FLEET_CLIENT_SECRET": secret, "RESOURCEFUL_FLEET_SEALING_KEY": sealingKey]
    }

    /// `/token` answers `tok-<n>` for its n-th request (after `delay(n)`), and `/v1/ok` answers
    /// calls carrying a token it issued.
    static func serve(_ server: MockServer, delay: @escaping @Sendable (Int) -> Duration? = { _ in nil }) {
        let issued = Locked(0)
        server.route(.post, "/token") { _ in
            let n = issued.withLock { count in
                count += 1
                return count
            }
            if let wait = delay(n) { try await Task.sleep(for: wait) }
            return .json(raw: #"{"access_token": "tok-\#(n)", "token_type": "Bearer", "expires_in": 3600}"#)
        }
        server.route(.get, "/v1/ok") { request in
            guard request.headerFields[.authorization]?.hasPrefix("Bearer tok-") == true else {
                return .json(raw: "{}", status: .unauthorized)
            }
            return .json(raw: "{}")
        }
    }

    static func tokenRequests(_ server: MockServer) -> Int {
        server.requests.filter { $0.path == "/token" }.count
    }

    /// How many sessions wait for a lease row another holds.
    static func waitingForTheLease() async throws -> Int {
        let count = try await rows(
            """
            SELECT count(*)::text FROM pg_catalog.pg_stat_activity
            WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO resourceful.leases%' AND pid <> pg_catalog.pg_backend_pid()
            """)
        return Int(count.first ?? "") ?? 0
    }

    static func arguments(_ server: MockServer) -> [String] {
        ["--token-url", server.baseURL.appendingPathComponent("token").absoluteString, "--client-id", "fleet"]
    }

    @Test("8 processes, 32 calls at once each, ask the token server once")
    func eightProcessesAskOnce() async throws {
        try await MockServer.withRunning { server in
            Self.serve(server)
            let outputs = try await fleet(
                8, baseURL: server.baseURL.appendingPathComponent("v1").absoluteString + "/",
                Self.arguments(server) + ["--calls", "64", "--concurrency", "32"], environment: Self.environment)
            #expect(try outcomes(outputs) == ["200": 8 * 64])
            #expect(Self.tokenRequests(server) == 1, "\(outputs[0])")
            // The table holds the token sealed: neither it nor the client's secret in clear.
            let kept = try await rows("SELECT encode(sealed, 'escape') || key_id || name FROM resourceful.tokens")
            #expect(kept.count == 1)
            #expect(!kept.contains { $0.contains("tok-1") || $0.contains(Self.secret) })
            #expect(!outputs.joined().contains("tok-1"))
        }
        _ = try await rows("DELETE FROM resourceful.tokens RETURNING name")
    }

    @Test("The lease holder killed with kill -9 mid-request: exactly one more token request, by another process")
    func aKilledLeaseHolderCostsOneMoreRequest() async throws {
        try await MockServer.withRunning { server in
            // The first token request is answered only long after the test ends it.
            Self.serve(server) { $0 == 1 ? .seconds(120) : nil }
            let base = server.baseURL.appendingPathComponent("v1").absoluteString + "/"
            let postgres = try suiteServer()
            let holder = Process()
            holder.executableURL = URL(fileURLWithPath: fleetWorker)
            holder.arguments = ["--postgres-port", "\(postgres.port)", "--base-url", base, "--calls", "1", "--concurrency", "1"] + Self.arguments(server)
            holder.environment = ProcessInfo.processInfo.environment.merging(Self.environment) { $1 }
                .merging(["RESOURCEFUL_FLEET_POSTGRES_PASSWORD": postgres.password]) { $1 }
            holder.standardOutput = FileHandle.nullDevice
            holder.standardError = FileHandle.nullDevice
            try holder.run()
            defer { if holder.isRunning { kill(holder.processIdentifier, SIGKILL) } }
            // The holder has the lease and its token request is out.
            try await poll { Self.tokenRequests(server) == 1 }
            let outputs = try await fleet(4, baseURL: base, Self.arguments(server) + ["--calls", "8", "--concurrency", "4"], environment: Self.environment) {
                // Every process waits for the lease; then its holder dies.
                try await poll { try await Self.waitingForTheLease() == 4 }
                kill(holder.processIdentifier, SIGKILL)
            }
            #expect(try outcomes(outputs) == ["200": 4 * 8])
            #expect(Self.tokenRequests(server) == 2)
        }
        _ = try await rows("DELETE FROM resourceful.tokens RETURNING name")
    }
}
