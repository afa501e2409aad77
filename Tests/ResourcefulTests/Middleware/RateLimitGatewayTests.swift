import Foundation
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

/// Against nginx enforcing 100 requests per second (`limit_req`, a burst of 100, refusals as
/// `429`) and saying so in the draft's `RateLimit-Policy` field: once the policy is known, 1,000
/// calls from 32 tasks meet no refusal and take about the policy's minimum time.
@Suite(.serialized) struct RateLimitGatewayTests {
    struct Item: Codable, Sendable { var id: Int }

    static let rate = 100
    static let burst = 100

    @Test func aFleetOfTasksKeepsToThePolicyTheGatewaySends() async throws {
        let nginx = try await Nginx.start(
            http: "limit_req_zone $server_name zone=api:1m rate=\(Self.rate)r/s;",
            server: """
                location /v1/ {
                    limit_req zone=api burst=\(Self.burst) nodelay;
                    limit_req_status 429;
                    add_header RateLimit-Policy '"default";q=\(Self.rate);w=1' always;
                }
                """
        ) { nginx in
            let folder = nginx.root.appendingPathComponent("v1")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(#"{"id": 1}"#.utf8).write(to: folder.appendingPathComponent("item.json"))
            try nginx.makeReadable()
        }
        do {
            try await run(against: nginx)
            try await nginx.stop()
        } catch {
            try? await nginx.stop()
            throw error
        }
    }

    private func run(against nginx: Nginx) async throws {
        var config = APIConfig(baseURL: try #require(URL(string: "http://127.0.0.1:\(nginx.port)/v1")), service: "gateway")
        config.retry.maxAttempts = 1
        config.timeout = .seconds(60)
        config.http.maximumConnectionsPerHost = 32
        try await AsyncHTTPClientTransport.withTransport(settings: config.http) { transport in
            let api = API(dependencies: APIDependencies(apiConfig: config, authenticationStorage: InMemoryAuthenticationStorage(), transport: transport))
            let request = AdHocRequest<Item, Empty>(.show, "item.json")
            // The first answer says the policy.
            _ = try await api.call(request)
            let calls = 1000
            let next = Locked(0)
            let start = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<32 {
                    group.addTask {
                        while next.withLock({ index in defer { index += 1 }; return index < calls }) {
                            _ = try await api.call(request)
                        }
                    }
                }
                try await group.waitForAll()
            }
            let elapsed = ContinuousClock.now - start
            let refused = nginx.accessLog.filter { $0.split(separator: " ").dropFirst(2).first == "429" }
            #expect(refused.isEmpty, "\(refused.count) refusals")
            // The burst at once, then one call each 10 ms: the policy's least time, and within
            // a tenth of it.
            let minimum = Duration.milliseconds((calls - Self.burst) * 1000 / Self.rate)
            #expect(elapsed >= minimum - .milliseconds(50), "\(elapsed)")
            #expect(elapsed <= minimum * 11 / 10, "\(elapsed) for a least time of \(minimum)")
        }
    }
}
