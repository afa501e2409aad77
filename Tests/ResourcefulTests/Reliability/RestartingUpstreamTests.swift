import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Synchronization
import Testing

/// An upstream that restarts, as in a deploy: while nginx is down its port refuses connections,
/// and a refused connection sent nothing, so every call (a `POST` too) keeps trying to connect
/// within its connect-retry budget instead of failing.
@Suite(.serialized) struct RestartingUpstreamTests {
    static let server = """
        location / { return 204; }
        """

    static func api(_ nginx: Nginx, timeout: Duration = .seconds(30), configure: (inout APIConfig) -> Void = { _ in }) throws -> (API, AsyncHTTPClientTransport) {
        var config = APIConfig(baseURL: try #require(URL(string: "http://127.0.0.1:\(nginx.port)/v1")), service: "upstream", timeout: timeout)
        configure(&config)
        let transport = AsyncHTTPClientTransport(settings: config.http)
        return (API(dependencies: APIDependencies(apiConfig: config, transport: transport)), transport)
    }

    /// Whether a line of nginx's access log matches `line`, polled for a while.
    static func logs(_ nginx: Nginx, _ line: (String) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if nginx.accessLog.contains(where: line) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    /// Returns once `succeeded` has passed `count`, polled; records an issue when it has not
    /// within 60 s.
    static func waitUntil(_ succeeded: borrowing Atomic<Int>, passes count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while succeeded.load(ordering: .relaxed) <= count {
            guard ContinuousClock.now < deadline else {
                Issue.record("calls did not pass \(count) within 60 s")
                return
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    @Test func twoRestartsLoseNoCall() async throws {
        var nginx = try await Nginx.start(server: Self.server)
        // A budget that outlasts the restart however slowly a loaded machine (or the thread
        // sanitizer) makes each connection attempt.
        let (api, transport) = try Self.api(nginx) { $0.http.connectRetryBudget = .seconds(20) }
        let running = Atomic<Bool>(true)
        let succeeded = Atomic<Int>(0)
        let calls = Task { () -> [String] in
            var failures: [String] = []
            while running.load(ordering: .relaxed) {
                do {
                    _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "item"))
                    succeeded.add(1, ordering: .relaxed)
                } catch {
                    failures.append(String(describing: error))
                }
            }
            return failures
        }
        for _ in 0..<2 {
            // Calls are flowing before each stop, and again after each start.
            try await Self.waitUntil(succeeded, passes: succeeded.load(ordering: .relaxed) + 10)
            try await nginx.halt()
            // The outage itself: down for as long as a restart is.
            try await Task.sleep(for: .milliseconds(400))
            try await nginx.resume()
        }
        try await Self.waitUntil(succeeded, passes: succeeded.load(ordering: .relaxed) + 10)
        running.store(false, ordering: .relaxed)
        let failures = await calls.value
        #expect(failures.isEmpty, "\(failures.count) calls failed: \(failures.prefix(3))")
        #expect(succeeded.load(ordering: .relaxed) > 30)
        try await transport.shutdown()
        try await nginx.stop()
    }

    @Test func aCreateIsSentOnceTheServerIsBack() async throws {
        var nginx = try await Nginx.start(server: Self.server)
        do {
            // Budget enough for nginx to start again on a loaded machine (a process to launch).
            let (api, transport) = try Self.api(nginx) { $0.http.connectRetryBudget = .seconds(20) }
            try await nginx.halt()
            // A create that does not opt into retries: a refused connection is still tried again.
            let call = Task { try await api.call(AdHocRequest<Empty, Empty>(.create, "items")) }
            // The outage itself: the create meets refused connections for this long.
            try await Task.sleep(for: .milliseconds(300))
            try await nginx.resume()
            let result = await call.result
            try? await transport.shutdown()
            _ = try result.get()
            // nginx logs a request after answering it: the line may come a moment after the answer.
            #expect(await Self.logs(nginx) { $0.hasSuffix("POST /v1/items") })
        } catch {
            // Stopped on every path: a failed call leaves no nginx behind.
            try? await nginx.stop()
            throw error
        }
        try await nginx.stop()
    }

    @Test func aLongerOutageEndsWithTheRefusedConnectionNamedBeforeTheDeadline() async throws {
        let nginx = try await Nginx.start(server: Self.server)
        // Long enough for more than one connection on a loaded machine.
        let budget = Duration.seconds(8)
        // A deadline far past the budget: an attempt under the thread sanitizer on a loaded
        // machine takes seconds, and the call must still end well before it.
        let timeout = Duration.seconds(120)
        let (api, transport) = try Self.api(nginx, timeout: timeout) { $0.http.connectRetryBudget = budget }
        try await nginx.halt()
        let start = ContinuousClock.now
        let error = await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "item")) }
        let elapsed = ContinuousClock.now - start
        #expect(error?.kind == .transport)
        let description = error?.description ?? ""
        #expect(description.contains("127.0.0.1:\(nginx.port) was refused"), "\(description)")
        // More than one connection was tried, and the retry policy did not spend the budget again.
        #expect((ConnectFailure.attempts(description) ?? 0) > 1, "\(description)")
        #expect(elapsed >= budget / 2)
        #expect(elapsed < timeout / 2)
        try await transport.shutdown()
        try await nginx.stop()
    }
}
