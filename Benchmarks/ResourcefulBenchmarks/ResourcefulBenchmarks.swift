import Benchmark
import Foundation
import Resourceful

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        warmupIterations: 20,
        maxDuration: .seconds(2),
        maxIterations: 20_000
    )
    let fixtures = Fixtures.shared

    // Micro: coding alone.
    Benchmark("decode show (JSONDecoder)") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try fixtures.decoder.decode(User.self, from: Payloads.showJSON)) }
    }
    Benchmark("decode index of 50 (JSONDecoder)") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try fixtures.decoder.decode([User].self, from: Payloads.indexJSON)) }
    }
    Benchmark("encode create body (JSONEncoder)") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try fixtures.encoder.encode(Payloads.createBody)) }
    }

    // Macro: one call at a time, then 32 at once, for each client.
    for (name, path) in [("show", "/users/1"), ("index", "/users"), ("create", "/users")] {
        for concurrency in [1, 32] {
            Benchmark("\(name) C=\(concurrency) raw AsyncHTTPClient") { benchmark in
                for _ in benchmark.scaledIterations {
                    try await batch(concurrency) {
                        switch name {
                        case "show": blackHole(try await fixtures.raw(path, as: User.self))
                        case "index": blackHole(try await fixtures.raw(path, as: [User].self))
                        default: blackHole(try await fixtures.raw(path, as: User.self, body: try fixtures.encoder.encode(Payloads.createBody)))
                        }
                    }
                }
            }
            Benchmark("\(name) C=\(concurrency) api.call") { benchmark in
                for _ in benchmark.scaledIterations {
                    try await batch(concurrency) {
                        switch name {
                        case "show": blackHole(try await fixtures.api.call(ShowUser()))
                        case "index": blackHole(try await fixtures.api.call(ListUsers()))
                        default: blackHole(try await fixtures.api.call(CreateUser()))
                        }
                    }
                }
            }
            Benchmark("\(name) C=\(concurrency) URLSession") { benchmark in
                for _ in benchmark.scaledIterations {
                    try await batch(concurrency) {
                        switch name {
                        case "show": blackHole(try await fixtures.urlSession(path, as: User.self))
                        case "index": blackHole(try await fixtures.urlSession(path, as: [User].self))
                        default: blackHole(try await fixtures.urlSession(path, as: User.self, body: try fixtures.encoder.encode(Payloads.createBody)))
                        }
                    }
                }
            }
        }
    }
}

/// Runs `body` `count` times at once and waits for all.
func batch(_ count: Int, _ body: @escaping @Sendable () async throws -> Void) async throws {
    if count == 1 { return try await body() }
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<count { group.addTask(operation: body) }
        try await group.waitForAll()
    }
}
