import Foundation
import HTTPTypes
import Logging
import Resourceful
import ResourcefulTesting
import Synchronization
import Testing

@Suite struct LoadTests {
    /// 10,000 calls, 256 at a time, with about 1% of answers failing: every call ends with a
    /// value or a typed error, and connections stay bounded by the pool.
    @Test func tenThousandCallsWithInjectedFaults() async throws {
        let pool = 16
        try await Harness.run(configure: { config in
            config.http.maximumConnectionsPerHost = pool
            config.retry = .init(maxAttempts: 2, baseDelay: .milliseconds(1), maxDelay: .milliseconds(5))
            config.logging.level = .info
        }) { harness in
            harness.dependencies.logger.logLevel = .info
            let served = Atomic<Int>(0)
            let faults = Atomic<Int>(0)
            harness.server.route(.get, "/v1/items/:id") { request in
                let n = served.add(1, ordering: .relaxed).newValue
                switch n % 100 {
                case 0:
                    faults.add(1, ordering: .relaxed)
                    return .closeConnection
                case 50:
                    return .status(.serviceUnavailable)
                default:
                    return .json(raw: #"{"id":"\#(request.pathParameters["id"] ?? "")"}"#)
                }
            }
            let api = harness.api
            let total = 10_000
            let concurrency = 256
            let outcome = try await withThrowingTaskGroup(of: Bool.self) { group in
                var started = 0
                var values = 0
                var errors = 0
                func startNext() {
                    let id = started
                    started += 1
                    group.addTask {
                        do {
                            let value = try await api.call(AdHocRequest<[String: String], Empty>(.show, "items/\(id)"))
                            return value == ["id": String(id)]
                        } catch {
                            return false
                        }
                    }
                }
                for _ in 0..<concurrency { startNext() }
                while let succeeded = try await group.next() {
                    if succeeded { values += 1 } else { errors += 1 }
                    if started < total { startNext() }
                }
                return (values, errors)
            }
            #expect(outcome.0 + outcome.1 == total)
            #expect(outcome.0 >= total * 97 / 100)
            // A dropped connection is replaced; otherwise the pool is the bound.
            #expect(harness.server.connectionCount <= pool + faults.load(ordering: .relaxed))
        }
    }
}
