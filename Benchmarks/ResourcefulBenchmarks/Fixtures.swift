import AsyncHTTPClient
import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOFoundationCompat
import NIOPosix
import Resourceful
import ResourcefulJSON
import ResourcefulKeyring
import ResourcefulTesting
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A log handler that writes nowhere, at the level it is given.
struct DiscardingLogHandler: LogHandler {
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {}
}

/// The server under test and the clients compared against it.
///
/// The server is the one at `RESOURCEFUL_BENCH_URL` (`make bench` starts nginx on its own core);
/// without it, a `MockServer` in this process, which shares the client's cores. Credentials come
/// from the keyring when `RESOURCEFUL_BENCH_KEYRING` is set (`make bench` runs under a private
/// keyring), else from memory.
final class Fixtures: Sendable {
    static let shared = Fixtures()

    /// The per-host connection limit of every client here: the default of ``APIConfig``.
    static let connections = APIConfig.HTTPSettings().maximumConnectionsPerHost
    static let service = "bench"
    static let token = "bench-token-3e1f"

    let base: String
    let serverDescription: String
    let storage: any AuthenticationStorage
    /// `api.call` with `JSONDecoder`, and with ``FastJSONDecoder``.
    let api: API
    let fastAPI: API
    /// `api.call` with `JSONDecoder` over ``CannedTransport``: everything of a call but the network.
    let cannedAPI: API
    /// What ``cannedAPI`` is made of.
    let cannedDependencies: APIDependencies
    /// The transport every API here sends through.
    let transport: AsyncHTTPClientTransport
    /// The GitHub-style and Stripe-style APIs, with the decoders their configurations choose.
    let realistic: RealisticAPI
    let rawClient: AsyncHTTPClient.HTTPClient
    let session: URLSession
    let decoder = JSONDecoder()
    let fastDecoder = FastJSONDecoder()
    let encoder = JSONEncoder()
    /// Held so that a fallback server stays up.
    private let server: MockServer?

    private init() {
        if let url = ProcessInfo.processInfo.environment["RESOURCEFUL_BENCH_URL"] {
            base = url
            serverDescription = "nginx at \(url)"
            server = nil
        } else {
            let started = BlockingStart { try await MockServer.start() }
            let mock = started.value
            mock.stub(.get, "/users/1", .json(raw: Payloads.showJSON))
            mock.stub(.get, "/users", .json(raw: Payloads.indexJSON))
            mock.stub(.post, "/users", .json(raw: Payloads.showJSON, status: .created))
            mock.stub(.get, RealisticAPI.gitHubPath, .json(raw: RealisticPayloads.gitHubIssues))
            mock.stub(.get, RealisticAPI.stripePath, .json(raw: RealisticPayloads.stripeCharges))
            base = mock.baseURL.absoluteString
            serverDescription = "in-process MockServer (set RESOURCEFUL_BENCH_URL, or run make bench)"
            server = mock
        }
        if let directory = ProcessInfo.processInfo.environment["RESOURCEFUL_BENCH_WWW"] {
            // nginx serves the realistic payloads from files this process writes once.
            RealisticAPI.write(to: URL(fileURLWithPath: directory))
        }
        if ProcessInfo.processInfo.environment["RESOURCEFUL_BENCH_KEYRING"] != nil {
            let keyring = Keyring()
            BlockingStart { try await keyring.store(Self.token, service: Self.service, account: Self.service) }.value
            storage = KeyringAuthenticationStorage(account: Self.service, keyring: keyring)
        } else {
            storage = InMemoryAuthenticationStorage([Self.service: "Bearer \(Self.token)"])
        }
        guard let baseURL = URL(string: base) else { preconditionFailure("bad RESOURCEFUL_BENCH_URL") }
        var config = APIConfig(baseURL: baseURL, service: Self.service)
        config.logging.maskedBodyKeys = ["password"]
        // Default-level logging: the logging step is in the chain and finds nothing to write.
        let logger = Logger(label: "bench") { _ in DiscardingLogHandler(logLevel: .info) }
        transport = AsyncHTTPClientTransport(settings: config.http)
        var dependencies = APIDependencies(apiConfig: config, authenticationStorage: storage, transport: transport, logger: logger)
        dependencies.responseDecoder = JSONDecoder()
        api = API(dependencies: dependencies)
        dependencies.responseDecoder = FastJSONDecoder()
        fastAPI = API(dependencies: dependencies)
        var canned = dependencies
        canned.transport = CannedTransport()
        canned.responseDecoder = JSONDecoder()
        cannedAPI = API(dependencies: canned)
        cannedDependencies = canned
        rawClient = Self.rawClient(connections: Self.connections)
        realistic = RealisticAPI(baseURL: baseURL, storage: storage, transport: transport, logger: logger)
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.httpMaximumConnectionsPerHost = Self.connections
        session = URLSession(configuration: sessionConfiguration)
    }

    static func rawClient(connections: Int) -> AsyncHTTPClient.HTTPClient {
        var configuration = AsyncHTTPClient.HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
        return AsyncHTTPClient.HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// `GET` or `POST` with raw AsyncHTTPClient, collected and decoded as `api.call` does. With
    /// `bodyDeadline`, the deadline covers the body as well as the head, as a call's does, the
    /// cheapest way AsyncHTTPClient's async API allows (the body collected in a task that an
    /// event-loop timer cancels at the deadline).
    func raw<T: Decodable>(
        _ path: String, as type: T.Type, body: Data? = nil, client: AsyncHTTPClient.HTTPClient? = nil, decoder: JSONDecoder? = nil,
        bodyDeadline: Bool = false
    ) async throws -> T {
        var request = HTTPClientRequest(url: base + path)
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "Authorization", value: "Bearer \(Self.token)")
        if let body {
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(data: body))
        }
        let deadline = NIODeadline.now() + .seconds(30)
        let response = try await (client ?? rawClient).execute(request, deadline: deadline)
        let bytes = try await bodyDeadline ? collect(response, before: deadline) : response.body.collect(upTo: 10 * 1024 * 1024)
        return try (decoder ?? self.decoder).decode(type, from: Data(buffer: bytes, byteTransferStrategy: .noCopy))
    }

    /// The same with URLSession.
    func urlSession<T: Decodable>(_ path: String, as type: T.Type, body: Data? = nil) async throws -> T {
        guard let url = URL(string: base + path) else { throw URLError(.badURL) }
        var request = URLRequest(url: url)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue("Bearer \(Self.token)", forHTTPHeaderField: "Authorization")
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
    private var result: Result<T, any Error>?

    init(_ start: @escaping @Sendable () async throws -> T) {
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                result = .success(try await start())
            } catch {
                result = .failure(error)
            }
            done.signal()
        }
        done.wait()
    }

    var value: T {
        switch result {
        case .success(let value): return value
        case .failure(let error): preconditionFailure("benchmark set-up failed: \(error)")
        case nil: preconditionFailure("benchmark set-up did not finish")
        }
    }
}

/// A transport that answers every request at once with the show payload and nginx's usual header
/// fields, so that `api.call` over it measures the library's own work per call.
struct CannedTransport: HTTPTransport {
    let response = TransportResponse(
        status: .ok,
        headerFields: [
            .server: "nginx", HTTPField.Name("Date")!: "Sun, 22 Nov 2026 21:00:00 GMT", .contentType: "application/json",
            .contentLength: String(Payloads.showJSON.count), .connection: "keep-alive",
        ],
        body: ByteBuffer(data: Payloads.showJSON)
    )

    func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse { response }
}

/// `response`'s body, collected by `deadline`: in a task that an event-loop timer cancels then,
/// the cheapest way AsyncHTTPClient's async API bounds a body's arrival.
func collect(_ response: HTTPClientResponse, before deadline: NIODeadline) async throws -> ByteBuffer {
    let collecting = Task { try await response.body.collect(upTo: 10 * 1024 * 1024) }
    let timer = MultiThreadedEventLoopGroup.singleton.any().scheduleTask(deadline: deadline) { collecting.cancel() }
    defer { timer.cancel() }
    return try await withTaskCancellationHandler {
        try await collecting.value
    } onCancel: {
        collecting.cancel()
    }
}
