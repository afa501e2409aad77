import Foundation
import Logging
import ProcessTestSupport
import Resourceful
import ResourcefulPostgres
import Testing

/// Several OS processes (`resourceful-fleet-worker`), each with its own connections, sharing rate
/// budgets and pauses through the suite's PostgreSQL, against nginx enforcing a limit.
@Suite(.postgres, .serialized)
struct FleetProcessTests {
    static let rate = 100
    static let burst = 100

    /// nginx at `rate` requests a second (`limit_req`, refusals as `429`), saying so in the draft's
    /// `RateLimit-Policy`; `/v1/limited` refuses every call with `Retry-After: 2`. Requests are
    /// logged with their time (`timed.log`: seconds with milliseconds, status, path).
    static func gateway() async throws -> Nginx {
        try await Nginx.start(
            http: """
                limit_req_zone $server_name zone=api:1m rate=\(rate)r/s;
                log_format timed '$msec $status $uri';
                """,
            server: """
                access_log timed.log timed;
                location /v1/limited {
                    add_header Retry-After 2 always;
                    return 429 '{}';
                }
                location /v1/ {
                    limit_req zone=api burst=\(burst) nodelay;
                    limit_req_status 429;
                    add_header RateLimit-Policy '"default";q=\(rate);w=1' always;
                }
                """
        ) { nginx in
            let folder = nginx.root.appendingPathComponent("v1")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data("{}".utf8).write(to: folder.appendingPathComponent("ok"))
            try nginx.makeReadable()
        }
    }

    /// What nginx logged: time in seconds, status, path.
    static func requests(_ nginx: Nginx) -> [(time: Double, status: Int, path: String)] {
        let text = (try? String(contentsOf: nginx.directory.appendingPathComponent("timed.log"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count == 3, let time = Double(fields[0]), let status = Int(fields[1]) else { return nil }
            return (time, status, String(fields[2]))
        }
    }

    @Test("1,000 calls from 8 processes keep to the policy the gateway sends: no refusal, about its least time")
    func eightProcessesKeepOneBudget() async throws {
        let nginx = try await Self.gateway()
        do {
            let calls = 1000
            let outputs = try await fleet(8, baseURL: "http://127.0.0.1:\(nginx.port)/v1/", ["--calls", "\(calls / 8)", "--concurrency", "4", "--timeout", "60"])
            #expect(try outcomes(outputs) == ["200": calls])
            let requests = Self.requests(nginx).filter { $0.path == "/v1/ok" }
            #expect(requests.count == calls)
            #expect(requests.filter { $0.status == 429 }.isEmpty, "\(requests.filter { $0.status == 429 }.count) refusals")
            // The burst at once, then one call each 10 ms for the whole fleet: the policy's least
            // time, and within a tenth of it. The calls on their way before the first answer said
            // the policy (at most one per task of the fleet, 32) took no place.
            let span = (requests.map(\.time).max() ?? 0) - (requests.map(\.time).min() ?? 0)
            let minimum = Double(calls - Self.burst) / Double(Self.rate)
            #expect(span >= minimum - 0.32 - 0.05, "\(span) s")
            #expect(span <= minimum * 1.1, "\(span) s for a least time of \(minimum) s")
            try await nginx.stop()
        } catch {
            try? await nginx.stop()
            throw error
        }
    }

    @Test("One 429 with Retry-After: 2 seen by one process: no process sends for 2 s")
    func onePauseHoldsEveryProcess() async throws {
        let nginx = try await Self.gateway()
        do {
            let server = try suiteServer()
            let base = try #require(URL(string: "http://127.0.0.1:\(nginx.port)/v1/"))
            var settings = APIConfig(baseURL: base, service: "fleet")
            settings.retry = .never
            let config = settings
            let outputs = try await fleet(4, baseURL: "http://127.0.0.1:\(nginx.port)/v1/", ["--seconds", "4", "--concurrency", "2", "--rate", "20", "--burst", "1"]) {
                // Once the fleet has been calling for a while, this process is refused once.
                try await poll { Self.requests(nginx).filter { $0.path == "/v1/ok" }.count >= 10 }
                let shared = PostgresSharedState(configuration: connection(to: server), options: .patient, logger: Logger(label: "fleet-test"))
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { await shared.run() }
                    defer { group.cancelAll() }
                    let dependencies = try await APIDependencies.live(config: config)
                    let api = API(dependencies: dependencies, middlewares: API.defaultMiddlewares(sharedState: shared.state))
                    await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "limited")) }
                    try await api.shutdown()
                }
            }
            #expect(try outcomes(outputs)["429", default: 0] == 0)
            let requests = Self.requests(nginx)
            let refused = try #require(requests.first { $0.path == "/v1/limited" })
            let calls = requests.filter { $0.path == "/v1/ok" }
            // Calls already on their way when the pause began may arrive just after it.
            let during = calls.filter { $0.time > refused.time + 0.1 && $0.time < refused.time + 1.95 }
            #expect(during.isEmpty, "\(during.count) calls during the pause")
            #expect(calls.contains { $0.time < refused.time }, "the fleet called before the pause")
            #expect(calls.contains { $0.time >= refused.time + 2 }, "the fleet called again after the pause")
            try await nginx.stop()
        } catch {
            try? await nginx.stop()
            throw error
        }
    }
}
