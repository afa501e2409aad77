import Foundation
import HTTPTypes
import ProcessTestSupport
@testable import Resourceful
import ResourcefulTesting
import Testing

/// `http.version` against nginx terminating TLS (HTTP/2 offered by ALPN) in front of a MockServer:
/// concurrent calls share one HTTP/2 connection, and retries, deadlines and cancellation behave
/// the same over HTTP/2 and HTTP/1.1.
@Suite(.serialized) struct HTTPVersionTests {
    private struct Setup {
        let pki: TestPKI
        let nginx: Nginx
        let upstream: MockServer
    }

    private func withServers(_ body: (Setup) async throws -> Void) async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-h2-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let pki = try await TestPKI.make(in: scratch)
        let server = try await pki.issue("server", subjectAltName: "DNS:localhost,IP:127.0.0.1")
        try await MockServer.withRunning { upstream in
            let nginx = try await Nginx.start(
                listenOptions: "ssl http2",
                server: """
                    ssl_certificate \(server.certificate); ssl_certificate_key \(server.key);
                    http2_max_concurrent_streams 128;
                    location / { proxy_pass \(upstream.baseURL.absoluteString); proxy_http_version 1.1; proxy_set_header Connection ""; }
                    """
            )
            do {
                try await body(Setup(pki: pki, nginx: nginx, upstream: upstream))
                try await nginx.stop()
            } catch {
                try? await nginx.stop()
                throw error
            }
        }
    }

    /// Runs `body` with an API through nginx, its transport shut down however `body` ends.
    private func withAPI(_ setup: Setup, version: APIConfig.HTTPVersionChoice, _ body: (API) async throws -> Void) async throws {
        var config = APIConfig(baseURL: URL(string: "https://localhost:\(setup.nginx.port)/v1")!, service: "s")
        config.http.version = version
        config.http.tls.caFile = setup.pki.caFile
        config.retry = .init(maxAttempts: 3, baseDelay: .milliseconds(5), maxDelay: .milliseconds(20))
        try await AsyncHTTPClientTransport.withTransport(settings: config.http) { transport in
            try await body(API(dependencies: APIDependencies(apiConfig: config, transport: transport)))
        }
    }

    /// The access log's lines for `path`, once nginx has written `count` of them.
    private func lines(_ nginx: Nginx, path: String, count: Int) async throws -> [[Substring]] {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            let lines = nginx.accessLog.map { $0.split(separator: " ") }.filter { $0.last.map(String.init) == path }
            if lines.count >= count || ContinuousClock.now > deadline { return lines }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test func concurrentCallsShareOneHTTP2Connection() async throws {
        try await withServers { setup in
            setup.upstream.stub(.get, "/v1/ok", .status(.noContent))
            try await withAPI(setup, version: .automatic) { api in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<32 { group.addTask { _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "ok")) } }
                    try await group.waitForAll()
                }
            }
            let lines = try await lines(setup.nginx, path: "/v1/ok", count: 32)
            #expect(lines.count == 32)
            #expect(lines.allSatisfy { $0[1] == "HTTP/2.0" })
            #expect(Set(lines.map { $0[0] }).count == 1, "connections: \(Set(lines.map { $0[0] }))")
        }
    }

    @Test func http1SpeaksHTTP1() async throws {
        try await withServers { setup in
            setup.upstream.stub(.get, "/v1/ok", .status(.noContent))
            try await withAPI(setup, version: .http1) { api in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<8 { group.addTask { _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "ok")) } }
                    try await group.waitForAll()
                }
            }
            let lines = try await lines(setup.nginx, path: "/v1/ok", count: 8)
            #expect(lines.count == 8)
            #expect(lines.allSatisfy { $0[1] == "HTTP/1.1" })
        }
    }

    @Test(arguments: APIConfig.HTTPVersionChoice.allCases)
    func retriesDeadlinesAndCancellationBehaveAlike(version: APIConfig.HTTPVersionChoice) async throws {
        try await withServers { setup in
            // A retried 503, then the answer.
            setup.upstream.stub(.get, "/v1/flaky", .status(.serviceUnavailable), .status(.serviceUnavailable), .status(.noContent))
            // The configured 30 s: a first TLS connection under the thread sanitizer, on a machine
            // busy with other suites, can take most of a second or two.
            try await withAPI(setup, version: version) { api in
                _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "flaky"))
                #expect(try await lines(setup.nginx, path: "/v1/flaky", count: 3).count == 3)

                // An answer later than the deadline: a time-out at the deadline, not after the answer
                // (nor at nginx's own 60 s wait for the upstream, a 504).
                var slow = MockResponse.status(.noContent)
                slow.delay = .seconds(600)
                setup.upstream.stub(.get, "/v1/slow", slow)
                let deadline = Duration.milliseconds(1500)
                let start = ContinuousClock.now
                let late = await #expect(throws: APIError.self) {
                    _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "slow", timeout: deadline))
                }
                #expect(late?.kind == .timeout)
                // A few times the deadline and room for a loaded machine: half of nginx's wait.
                #expect(ContinuousClock.now - start < deadline * 4 + .seconds(24))

                // Cancelling the calling task ends the call at once.
                let arrived = Event()
                let held = slow
                setup.upstream.route(.get, "/v1/held") { _ in
                    arrived.happen()
                    return held
                }
                let call = Task { try await api.call(AdHocRequest<Empty, Empty>(.show, "held")) }
                // Cancelled once the upstream has the request: the call is in flight.
                await arrived.wait()
                let cancelledAt = ContinuousClock.now
                call.cancel()
                let result = await call.result
                // Ended by the cancellation, not by the answer, nginx's 60 s or the deadline (30 s):
                // half the deadline leaves a loaded machine room.
                #expect(ContinuousClock.now - cancelledAt < .seconds(15))
                if case .failure(let error as APIError) = result {
                    #expect(error.kind == .cancelled)
                } else {
                    Issue.record("expected a cancelled call, got \(result)")
                }
            }
        }
    }
}
