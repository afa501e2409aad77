import Foundation
import ProcessTestSupport
import Testing

/// `resourceful-fleet-worker`, built beside the tests.
let fleetWorker = URL(fileURLWithPath: resourcefulTool).deletingLastPathComponent().appendingPathComponent("resourceful-fleet-worker").path

/// Starts `count` workers with `arguments`, lets them call together once all are connected,
/// and returns what each printed.
func fleet(
    _ count: Int, baseURL: String, _ arguments: [String], environment: [String: String] = [:],
    whileRunning: @Sendable () async throws -> Void = {}
) async throws -> [String] {
    let server = try suiteServer()
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let worker = fleetWorker
    let go = folder.appendingPathComponent("go").path
    return try await withThrowingTaskGroup(of: (Int, String).self) { group in
        for index in 0..<count {
            group.addTask {
                let result = try await Command.run(
                    worker,
                    [
                        "--postgres-port", "\(server.port)", "--base-url", baseURL,
                        "--ready", folder.appendingPathComponent("ready-\(index)").path, "--go", go,
                    ] + arguments,
                    environment: environment.merging(["RESOURCEFUL_FLEET_POSTGRES_PASSWORD": server.password]) { $1 }
                )
                guard result.status == 0 else { throw Command.Failed(result: result) }
                return (index, result.output)
            }
        }
        // Every worker has its connections up: they start together.
        let deadline = ContinuousClock.now + .seconds(120)
        while (try FileManager.default.contentsOfDirectory(atPath: folder.path)).filter({ $0.hasPrefix("ready-") }).count < count {
            guard ContinuousClock.now < deadline else { throw POSIXError(.ETIMEDOUT) }
            try await Task.sleep(for: .milliseconds(20))
        }
        _ = FileManager.default.createFile(atPath: go, contents: Data())
        try await whileRunning()
        var outputs = Array(repeating: "", count: count)
        for try await (index, output) in group { outputs[index] = output }
        return outputs
    }
}

/// The outcomes a worker printed, summed over the fleet.
func outcomes(_ outputs: [String]) throws -> [String: Int] {
    var total: [String: Int] = [:]
    for output in outputs {
        let line = try #require(output.split(separator: "\n").last)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        for (outcome, count) in try #require(report["outcomes"] as? [String: Int]) { total[outcome, default: 0] += count }
    }
    return total
}

/// Waits until `condition` holds, checking every 20 ms, for at most a minute.
func poll(_ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(60)
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw POSIXError(.ETIMEDOUT) }
        try await Task.sleep(for: .milliseconds(20))
    }
}
