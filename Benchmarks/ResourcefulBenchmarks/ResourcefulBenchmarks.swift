import AsyncHTTPClient
import Benchmark
import Foundation
import HTTPTypes
import Logging
import NIOCore
import Resourceful
import ResourcefulJSON
import ResourcefulKeyring
import ResourcefulTesting

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        warmupIterations: 50,
        maxDuration: .seconds(3),
        maxIterations: 100_000
    )
    let fixtures = Fixtures.shared
    FileHandle.standardError.write(Data("Server: \(fixtures.serverDescription)\n".utf8))

    // Micro: one step of a call at a time.
    Benchmark("micro decode show JSONDecoder") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try fixtures.decoder.decode(User.self, from: Payloads.showJSON)) }
    }
    Benchmark("micro decode show FastJSONDecoder") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try fixtures.fastDecoder.decode(User.self, from: Payloads.showJSON)) }
    }
    Benchmark("micro decode index of 50 JSONDecoder") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try fixtures.decoder.decode([User].self, from: Payloads.indexJSON)) }
    }
    Benchmark("micro decode index of 50 FastJSONDecoder") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try fixtures.fastDecoder.decode([User].self, from: Payloads.indexJSON)) }
    }
    for (payload, json) in [("show", Payloads.showJSON), ("index of 50", Payloads.indexJSON)] {
        let many = payload != "show"
        Paired(names: ["JSONDecoder", "FastJSONDecoder"]) { variant in
            let decoder: any ResponseDecoder = variant == 0 ? fixtures.decoder : fixtures.fastDecoder
            if many { blackHole(try decoder.decode([User].self, from: json)) } else { blackHole(try decoder.decode(User.self, from: json)) }
        }.register("decode \(payload) paired", maxDuration: .seconds(3))
    }
    Benchmark("micro encode create body JSONEncoder") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try fixtures.encoder.encode(Payloads.createBody)) }
    }
    Benchmark("micro build show request", configuration: .init(scalingFactor: .kilo)) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try await fixtures.api.transportRequest(for: ShowUser())) }
    }
    Benchmark("micro build index request with query", configuration: .init(scalingFactor: .kilo)) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try await fixtures.api.transportRequest(for: ListUsers())) }
    }
    Benchmark("micro cached Authorization header", configuration: .init(scalingFactor: .kilo)) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try await fixtures.storage.authenticationHeader(for: Fixtures.service)) }
    }
    // The library's own work per call: `api.call` over a transport that answers at once, paired
    // with decoding the same payload alone. The difference is everything but network and decoding.
    Paired(names: ["decode show JSONDecoder", "api.call show in-memory transport", "api.call index in-memory transport"]) { variant in
        switch variant {
        case 0: blackHole(try fixtures.decoder.decode(User.self, from: Payloads.showJSON))
        case 1: blackHole(try await fixtures.cannedAPI.call(ShowUser()))
        default: blackHole(try await fixtures.cannedAPI.call(ListUsersAnswered()))
        }
    }.register("own work paired", repeats: 100, maxDuration: .seconds(4))
    let logging = LoggingLine()
    Paired(names: ["api.call create logged with redaction", "api.call create not logged"]) { variant in
        blackHole(try await (variant == 0 ? logging.verbose : logging.quiet).call(CreateUser()))
    }.register("log lines paired", repeats: 100, maxDuration: .seconds(4))

    // Macro, paired: one batch of each client per iteration. URLSession is paired with raw
    // AsyncHTTPClient on its own: the connections it opens and drops at C=32 leave work behind
    // for whichever client runs next.
    for verb in ["show", "index", "create"] {
        for concurrency in [1, 32] {
            Paired(names: ["raw AsyncHTTPClient", "api.call JSONDecoder", "api.call FastJSONDecoder"]) { client in
                try await batch(concurrency) {
                    switch client {
                    case 0: try await rawCall(verb, fixtures)
                    case 1: try await apiCall(verb, fixtures.api)
                    default: try await apiCall(verb, fixtures.fastAPI)
                    }
                }
            }.register("\(verb) C=\(concurrency) paired", repeats: 4, maxDuration: .seconds(10))
            // The same against raw AsyncHTTPClient given the deadline a call has: over the whole
            // body, not only the head.
            Paired(names: ["raw AsyncHTTPClient, body deadline", "api.call JSONDecoder", "raw AsyncHTTPClient"]) { client in
                try await batch(concurrency) {
                    switch client {
                    case 0: try await rawCall(verb, fixtures, bodyDeadline: true)
                    case 1: try await apiCall(verb, fixtures.api)
                    default: try await rawCall(verb, fixtures)
                    }
                }
            }.register("\(verb) C=\(concurrency) body deadline paired", repeats: 4, maxDuration: .seconds(10))
            Paired(names: ["raw AsyncHTTPClient", "URLSession"]) { client in
                try await batch(concurrency) {
                    if client == 0 { try await rawCall(verb, fixtures) } else { try await sessionCall(verb, fixtures) }
                }
            }.register("\(verb) C=\(concurrency) URLSession paired", maxDuration: .seconds(3))
        }
    }

    // The transport alone (the request `api.call` would send, sent without the API's steps and
    // decoded with JSONDecoder), against raw AsyncHTTPClient: how much of `api.call`'s cost over
    // raw is the transport's way of using AsyncHTTPClient rather than the API's own work.
    for concurrency in [1, 32] {
        Paired(names: ["raw AsyncHTTPClient", "AsyncHTTPClientTransport"]) { client in
            try await batch(concurrency) {
                if client == 0 { return try await rawCall("show", fixtures) }
                var request = try await fixtures.api.transportRequest(for: ShowUser())
                request.deadline = .now + .seconds(30)
                let response = try await fixtures.transport.send(request)
                blackHole(try fixtures.decoder.decode(User.self, from: Data(buffer: response.body.bytes ?? ByteBuffer(), byteTransferStrategy: .noCopy)))
            }
        }.register("show C=\(concurrency) transport paired", repeats: 4, maxDuration: .seconds(6))
    }

    // Allocations and absolute times of one call, unpaired.
    Benchmark("show C=1 raw AsyncHTTPClient") { benchmark in
        for _ in benchmark.scaledIterations { try await rawCall("show", fixtures) }
    }
    Benchmark("show C=1 api.call JSONDecoder") { benchmark in
        for _ in benchmark.scaledIterations { try await apiCall("show", fixtures.api) }
    }
    Benchmark("index C=1 raw AsyncHTTPClient") { benchmark in
        for _ in benchmark.scaledIterations { try await rawCall("index", fixtures) }
    }
    Benchmark("index C=1 api.call JSONDecoder") { benchmark in
        for _ in benchmark.scaledIterations { try await apiCall("index", fixtures.api) }
    }

    // The per-host connection limit: raw AsyncHTTPClient at C=32 with 8 (AsyncHTTPClient's own
    // default), 32 and 64 connections, paired.
    let pools = [8, 32, 64].map { (connections: $0, client: Fixtures.rawClient(connections: $0)) }
    Paired(names: pools.map { "max \($0.connections)" }) { variant in
        try await batch(32) { blackHole(try await fixtures.raw("/users/1", as: User.self, client: pools[variant].client)) }
    }.register("pool show C=32 paired")

    registerRealisticBenchmarks(fixtures)
    registerClientFormBenchmarks(fixtures)
    registerCacheStorageBenchmarks()
    registerUpstreamLimitBenchmarks(fixtures)
}

func rawCall(_ verb: String, _ fixtures: Fixtures, bodyDeadline: Bool = false) async throws {
    switch verb {
    case "show": blackHole(try await fixtures.raw("/users/1", as: User.self, bodyDeadline: bodyDeadline))
    case "index": blackHole(try await fixtures.raw("/users?page=1&tags%5B%5D=alpha", as: [User].self, bodyDeadline: bodyDeadline))
    default:
        let body = try fixtures.encoder.encode(Payloads.createBody)
        blackHole(try await fixtures.raw("/users", as: User.self, body: body, bodyDeadline: bodyDeadline))
    }
}

func apiCall(_ verb: String, _ api: API) async throws {
    switch verb {
    case "show": blackHole(try await api.call(ShowUser()))
    case "index": blackHole(try await api.call(ListUsers()))
    default: blackHole(try await api.call(CreateUser()))
    }
}

func sessionCall(_ verb: String, _ fixtures: Fixtures) async throws {
    switch verb {
    case "show": blackHole(try await fixtures.urlSession("/users/1", as: User.self))
    case "index": blackHole(try await fixtures.urlSession("/users?page=1&tags%5B%5D=alpha", as: [User].self))
    default: blackHole(try await fixtures.urlSession("/users", as: User.self, body: try fixtures.encoder.encode(Payloads.createBody)))
    }
}

/// Variants of one operation measured in pairs: each iteration runs every variant once, in a
/// random order, and records the first variant's time and each other's time over it (times
/// 10,000), so that drift in the machine's speed between benchmarks does not enter the ratios.
/// The order is shuffled, not rotated: under rotation each variant would always follow the same
/// other one and inherit whatever work it leaves behind. With `repeats`, each variant's time is that
/// of so many runs in a row (the first metric is per run), so that work a run leaves behind (a
/// client's cleanup after its response is delivered) is mostly charged to its own variant.
struct Paired: Sendable {
    let names: [String]
    let run: @Sendable (_ variant: Int) async throws -> Void

    /// The first variant's wall-clock time, each other's over it, then the same for the
    /// process's processor time (every thread of the client, nginx being another process).
    var metrics: [BenchmarkMetric] {
        [.custom("\(names[0]) (ns)", useScalingFactor: false)]
            + names.dropFirst().map { .custom("\($0) / \(names[0]) (x10000)", useScalingFactor: false) }
            + [.custom("\(names[0]) cpu (ns)", useScalingFactor: false)]
            + names.dropFirst().map { .custom("\($0) cpu / \(names[0]) cpu (x10000)", useScalingFactor: false) }
    }

    func register(_ name: String, repeats: Int = 1, maxDuration: Duration = .seconds(6)) {
        let metrics = metrics
        // Whole numbers, never scaled to thousands, so that the ratios keep four digits.
        let units = Dictionary(uniqueKeysWithValues: metrics.map { ($0, BenchmarkUnits.count) })
        let configuration = Benchmark.Configuration(
            metrics: metrics, units: units, warmupIterations: 10, maxDuration: maxDuration, maxIterations: 50_000
        )
        Benchmark(name, configuration: configuration) { benchmark in
            var generator = SeededRandomNumberGenerator(seed: 0x5EED)
            for _ in benchmark.scaledIterations {
                var nanoseconds = [Int](repeating: 0, count: names.count)
                var cpu = [Int](repeating: 0, count: names.count)
                for variant in Array(0..<names.count).shuffled(using: &generator) {
                    let (start, cpuStart) = (ContinuousClock.now, processorTime())
                    for _ in 0..<repeats { try await run(variant) }
                    let elapsed = (ContinuousClock.now - start).components
                    nanoseconds[variant] = Int(elapsed.seconds) * 1_000_000_000 + Int(elapsed.attoseconds / 1_000_000_000)
                    cpu[variant] = processorTime() - cpuStart
                }
                let count = names.count
                benchmark.measurement(metrics[0], nanoseconds[0] / repeats)
                benchmark.measurement(metrics[count], cpu[0] / repeats)
                for variant in 1..<count {
                    benchmark.measurement(metrics[variant], nanoseconds[variant] * 10_000 / max(nanoseconds[0], 1))
                    benchmark.measurement(metrics[count + variant], cpu[variant] * 10_000 / max(cpu[0], 1))
                }
            }
        }
    }
}

/// Processor time used by this process so far, all threads, in nanoseconds.
func processorTime() -> Int {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return time.tv_sec * 1_000_000_000 + time.tv_nsec
}

/// Runs `body` `count` times at once and waits for all.
func batch(_ count: Int, _ body: @escaping @Sendable () async throws -> Void) async throws {
    if count == 1 { return try await body() }
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<count { group.addTask(operation: body) }
        try await group.waitForAll()
    }
}

/// A create through the default middlewares over an in-memory transport, with the logger at
/// `debug` (both lines written, the password masked in the body) or at `info` (nothing written):
/// the difference is the logging step's work.
struct LoggingLine: Sendable {
    let verbose: API
    let quiet: API

    init() {
        var config = APIConfig(baseURL: URL(string: "http://127.0.0.1:1")!, service: Fixtures.service)
        config.logging.maskedBodyKeys = ["password"]
        func api(_ level: Logger.Level) -> API {
            let logger = Logger(label: "bench") { _ in DiscardingLogHandler(logLevel: level) }
            return API(
                dependencies: APIDependencies(
                    apiConfig: config,
                    authenticationStorage: InMemoryAuthenticationStorage([Fixtures.service: "Bearer \(Fixtures.token)"]),
                    transport: CannedTransport(),
                    logger: logger
                )
            )
        }
        verbose = api(.debug)
        quiet = api(.info)
    }
}

