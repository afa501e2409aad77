// One process of a fleet, for the ResourcefulPostgres tests: calls an upstream through rate
// budgets and breakers shared in PostgreSQL, and prints what it saw as one JSON line.
//
//   resourceful-fleet-worker --postgres-port P --base-url URL --path ok --calls N --concurrency C
//       [--rate R --burst B] [--seconds S] [--timeout S] [--ready FILE --go FILE]
//       [--token-url URL --client-id ID [--fail-without-store] [--refresh]] [--cache] [--memory]
//
// The database password is read from RESOURCEFUL_FLEET_POSTGRES_PASSWORD, never from the command
// line; with --token-url, calls carry a client_credentials token shared through PostgreSQL (the
// client secret from RESOURCEFUL_FLEET_CLIENT_SECRET, the 32-byte sealing key, in hex, from
// RESOURCEFUL_FLEET_SEALING_KEY); with --cache, answers are kept in the HTTP cache the fleet
// shares (sealed with the same key). With --seconds, each task calls until that time has passed instead of N calls in all.
// With --ready and --go, the worker writes the first file once its connections are up and waits
// for the second, so that the processes of a fleet start calling together. With --memory, the
// state is the process's own and PostgreSQL is not used (Benchmarks/scripts/bench-fleet.py).
import Foundation
import HTTPTypes
import Logging
import PostgresNIO
import Synchronization
import Resourceful
import ResourcefulOAuth2
import ResourcefulPostgres

struct Ping: ResourceRequest {
    typealias ResourceType = Empty
    let verb = ResourceVerb.show
    let path: ResourcePath
}

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: "--" + name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(2)
}

// With --memory, each process keeps its own state, as without a fleet's store (the benchmarks'
// baseline): no connection to PostgreSQL is made.
let inMemory = CommandLine.arguments.contains("--memory")
guard let portText = option("postgres-port") ?? (inMemory ? "5432" : nil), let port = Int(portText),
    let password = ProcessInfo.processInfo.environment["RESOURCEFUL_FLEET_POSTGRES_PASSWORD"] ?? (inMemory ? "" : nil),
    let base = option("base-url"), let baseURL = URL(string: base)
else { fail("usage: resourceful-fleet-worker --postgres-port P --base-url URL …") }

let calls = Int(option("calls") ?? "") ?? 100
let concurrency = max(Int(option("concurrency") ?? "") ?? 4, 1)
let seconds = Double(option("seconds") ?? "")
let path = ResourcePath(stringLiteral: option("path") ?? "ok")

var logger = Logger(label: "fleet-worker")
logger.logLevel = .warning
var limits = APIConfig.UpstreamLimits()
if let rate = Double(option("rate") ?? "") {
    limits.rate = RateBudget(requestsPerSecond: rate, burst: Int(option("burst") ?? "") ?? 1)
}
let config = APIConfig(
    baseURL: baseURL,
    service: "fleet",
    timeout: .seconds(Double(option("timeout") ?? "") ?? 30),
    retry: APIConfig.RetryPolicy(maxAttempts: 1),
    limits: limits
)
let connection = PostgresClient.Configuration(
    host: "127.0.0.1", port: port, username: "resourceful", password: password, database: "postgres", tls: .disable)
// A loaded test machine must not make the store look unavailable: a statement may take 5 s.
var options = PostgresSharedState.Options()
options.statementTimeout = .seconds(5)
let shared = PostgresSharedState(configuration: connection, options: options, logger: logger)

/// What the calls came to: status codes and error kinds, counted.
actor Tally {
    var outcomes: [String: Int] = [:]
    func count(_ outcome: String) { outcomes[outcome, default: 0] += 1 }
}

/// The client secret, as a storage hands it to the OAuth 2 storage.
struct Secrets: SecretStorage {
    let secrets: [String: String]
    func secret(named name: String) async throws -> String? { secrets[name] }
}

/// `0a1b…` as bytes.
func bytes(hex: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex), let byte = UInt8(hex[index..<next], radix: 16) {
        bytes.append(byte)
        index = next
    }
    return bytes
}

/// The key rows are sealed with, from RESOURCEFUL_FLEET_SEALING_KEY.
func sealingKeys() throws -> SharedStateKeys {
    try SharedStateKeys(current: "k1", keys: ["k1": bytes(hex: ProcessInfo.processInfo.environment["RESOURCEFUL_FLEET_SEALING_KEY"] ?? "")])
}

/// The credentials of the calls: a client_credentials token shared by the fleet, or none.
func storage(transport: any HTTPTransport) async throws -> (any AuthenticationStorage)? {
    guard let tokenURL = option("token-url").flatMap(URL.init(string:)), let clientID = option("client-id") else { return nil }
    let environment = ProcessInfo.processInfo.environment
    let keys = try sealingKeys()
    let tokens = PostgresTokenCache(
        sharedState: shared, keys: keys, whenUnavailable: CommandLine.arguments.contains("--fail-without-store") ? .fail : .askAlone)
    // With --refresh, the refresh_token grant: refresh tokens the fleet shares, rotated by each renewal.
    let refresh = CommandLine.arguments.contains("--refresh")
    return try await OAuth2AuthenticationStorage(
        settings: OAuth2Settings(clientID: clientID, tokenEndpoint: tokenURL, grant: refresh ? .refreshToken : .clientCredentials),
        transport: transport,
        clientSecret: Secrets(secrets: ["\(clientID)-client-secret": environment["RESOURCEFUL_FLEET_CLIENT_SECRET"] ?? ""]),
        refreshTokens: refresh ? PostgresRefreshTokenStorage(sharedState: shared, keys: keys) : nil,
        sharedTokens: tokens,
        logger: logger
    )
}

let tally = Tally()
let started = ContinuousClock.now
await withDiscardingTaskGroup { group in
    if !inMemory { group.addTask { await shared.run() } }
    do {
        if !inMemory { try await shared.prepare() }
        var dependencies = try await APIDependencies.live(config: config)
        if let credentials = try await storage(transport: dependencies.transport) { dependencies.authenticationStorage = credentials }
        var middlewares = inMemory ? API.defaultMiddlewares : API.defaultMiddlewares(sharedState: shared.state)
        if CommandLine.arguments.contains("--cache") {
            let keys = try sealingKeys()
            middlewares.append(HTTPCacheMiddleware(storage: PostgresHTTPCacheStorage(sharedState: shared, keys: keys), digestKey: keys.cacheDigestKey))
        }
        let api = API(dependencies: dependencies, middlewares: middlewares)
        if let ready = option("ready"), let go = option("go") {
            _ = FileManager.default.createFile(atPath: ready, contents: Data())
            while !FileManager.default.fileExists(atPath: go) { try await Task.sleep(for: .milliseconds(5)) }
        }
        let share = Counter(calls)
        let until = seconds.map { ContinuousClock.now + .milliseconds(Int64($0 * 1000)) }
        await withDiscardingTaskGroup { calls in
            for _ in 0..<concurrency {
                calls.addTask {
                    while until.map({ ContinuousClock.now < $0 }) ?? share.take() {
                        do throws(APIError) {
                            _ = try await api.call(Ping(path: path))
                            await tally.count("200")
                        } catch {
                            if let status = error.status { await tally.count("\(status.code)") } else { await tally.count("\(error.kind)") }
                        }
                    }
                }
            }
        }
        try await api.shutdown()
    } catch {
        fail("fleet worker: \(error)")
    }
    group.cancelAll()
}
let elapsed = ContinuousClock.now - started
let outcomes = await tally.outcomes
let report: [String: Any] = ["outcomes": outcomes, "seconds": Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18]
let data = try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys])
print(String(decoding: data, as: UTF8.self))

/// The calls left to make, taken one at a time by the tasks.
final class Counter: Sendable {
    private let left: Mutex<Int>
    init(_ count: Int) { left = Mutex(count) }
    func take() -> Bool {
        left.withLock { left in
            guard left > 0 else { return false }
            left -= 1
            return true
        }
    }
}
