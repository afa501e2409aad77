import AsyncHTTPClient
import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOFoundationCompat
import Resourceful
import ResourcefulTesting
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A log handler at `debug` that writes nowhere: the logging step does all its work.
struct DiscardingLogHandler: LogHandler {
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .debug
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {}
}

/// A loopback server with the fixed payloads, and the three clients under comparison.
final class Fixtures: Sendable {
    static let shared = Fixtures()

    let server: MockServer
    let api: API
    let rawClient: AsyncHTTPClient.HTTPClient
    let session: URLSession
    let base: String
    let decoder = JSONDecoder()
    let encoder = JSONEncoder()

    private init() {
        let started = BlockingStart { try await MockServer.start() }
        server = started.value
        server.stub(.get, "/users/1", .json(raw: Payloads.showJSON))
        server.stub(.get, "/users", .json(raw: Payloads.indexJSON))
        server.stub(.post, "/users", .json(raw: Payloads.showJSON, status: .created))
        base = server.baseURL.absoluteString
        var config = APIConfig(baseURL: server.baseURL, service: "bench")
        config.logging.maskedBodyKeys = ["password"]
        config.http.maximumConnectionsPerHost = 64
        var logger = Logger(label: "bench") { _ in DiscardingLogHandler() }
        logger.logLevel = .info
        api = API(
            dependencies: APIDependencies(
                apiConfig: config,
                authenticationStorage: InMemoryAuthenticationStorage(["bench": "Bearer bench-token"]),
                httpClient: AsyncHTTPClientTransport(settings: config.http),
                logger: logger
            )
        )
        var rawConfiguration = AsyncHTTPClient.HTTPClient.Configuration()
        rawConfiguration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
        rawClient = AsyncHTTPClient.HTTPClient(eventLoopGroupProvider: .singleton, configuration: rawConfiguration)
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.httpMaximumConnectionsPerHost = 64
        session = URLSession(configuration: sessionConfiguration)
    }

    /// `GET` or `POST` with raw AsyncHTTPClient, collected and decoded like `api.call`.
    func raw<T: Decodable>(_ path: String, as type: T.Type, body: Data? = nil) async throws -> T {
        var request = HTTPClientRequest(url: base + path)
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "Authorization", value: "Bearer bench-token")
        if let body {
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(data: body))
        }
        let response = try await rawClient.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 10 * 1024 * 1024)
        return try decoder.decode(type, from: Data(buffer: bytes, byteTransferStrategy: .noCopy))
    }

    /// The same with URLSession.
    func urlSession<T: Decodable>(_ path: String, as type: T.Type, body: Data? = nil) async throws -> T {
        guard let url = URL(string: base + path) else { throw URLError(.badURL) }
        var request = URLRequest(url: url)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue("Bearer bench-token", forHTTPHeaderField: "Authorization")
        if let body {
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = body
        }
        let (data, _) = try await session.data(for: request)
        return try decoder.decode(type, from: data)
    }
}

/// Runs async set-up to its end from synchronous code, once, at start-up.
final class BlockingStart<T: Sendable>: @unchecked Sendable {
    // Written once by the task before the semaphore is signalled, read after the wait.
    private var result: T?

    init(_ start: @escaping @Sendable () async throws -> T) {
        let done = DispatchSemaphore(value: 0)
        Task {
            result = try? await start()
            done.signal()
        }
        done.wait()
    }

    var value: T {
        guard let result else { preconditionFailure("benchmark set-up failed") }
        return result
    }
}
