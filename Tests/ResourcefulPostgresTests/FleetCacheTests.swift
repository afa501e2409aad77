import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

/// The HTTP cache shared by OS processes through the suite's PostgreSQL: one process's cacheable
/// answer serves another, never across credentials.
@Suite(.postgres, .serialized)
struct FleetCacheTests {
    @Test("Process B is answered from process A's cached answer; Alice's answer never serves Bob's process")
    func processesShareTheCacheWithinACredential() async throws {
        try await MockServer.withRunning { server in
            FleetTokenTests.serve(server)
            server.route(.get, "/v1/catalog") { _ in
                var response = MockResponse.json(raw: "{}")
                response.headerFields[.cacheControl] = "max-age=60"
                return response
            }
            server.route(.get, "/v1/me") { _ in
                var response = MockResponse.json(raw: "{}")
                response.headerFields[.cacheControl] = "public, max-age=60"
                return response
            }
            let base = server.baseURL.appendingPathComponent("v1").absoluteString + "/"
            let token = server.baseURL.appendingPathComponent("token").absoluteString
            func run(_ path: String, as client: String?) async throws {
                let credentials = client.map { ["--token-url", token, "--client-id", $0] } ?? []
                let outputs = try await fleet(
                    1, baseURL: base, ["--cache", "--path", path, "--calls", "1", "--concurrency", "1"] + credentials,
                    environment: FleetTokenTests.environment)
                #expect(try outcomes(outputs) == ["200": 1])
            }
            func upstream(_ path: String) -> Int { server.requests.filter { $0.path == path }.count }

            try await run("catalog", as: nil)
            try await run("catalog", as: nil)
            #expect(upstream("/v1/catalog") == 1, "the second process asked the upstream")

            try await run("me", as: "alice")
            try await run("me", as: "bob")
            #expect(upstream("/v1/me") == 2, "Bob's process was given Alice's answer")
            try await run("me", as: "alice")
            #expect(upstream("/v1/me") == 2, "Alice's second process asked the upstream")
        }
        let cells = try await rows("SELECT encode(entry, 'escape') FROM resourceful.http_cache")
        #expect(!cells.isEmpty)
        #expect(!cells.contains { $0.contains("tok-") }, "a token in a cached row")
        _ = try await rows("DELETE FROM resourceful.tokens RETURNING name")
    }
}
