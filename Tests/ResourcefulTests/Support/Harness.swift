import Foundation
import HTTPTypes
import InMemoryLogging
import Logging
import Resourceful
import ResourcefulTesting

/// A MockServer on loopback, a live transport pointed at it, and a logger that keeps every line.
struct Harness {
    static let service = "test-api"

    let server: MockServer
    let logs: InMemoryLogHandler
    var dependencies: APIDependencies

    var api: API { API(dependencies: dependencies) }

    /// Runs `body` with a fresh harness, shutting everything down afterwards.
    static func run<T>(
        authorization: String? = Harness.token,
        configure: (inout APIConfig) -> Void = { _ in },
        _ body: (inout Harness) async throws -> T
    ) async throws -> T {
        var config = APIConfig(baseURL: URL(string: "http://127.0.0.1")!, service: service)
        config.logging.level = .trace
        config.logging.maskedHeaders = ["X-Api-Key"]
        configure(&config)
        return try await MockServer.withTransport(settings: config.http) { server, transport in
            config.baseURL = server.baseURL.appendingPathComponent("v1")
            let logs = InMemoryLogHandler()
            var logger = Logger(label: "test", factory: { _ in logs })
            logger.logLevel = .trace
            let storage = InMemoryAuthenticationStorage(authorization.map { [service: $0] } ?? [:])
            var harness = Harness(
                server: server,
                logs: logs,
                dependencies: APIDependencies(apiConfig: config, authenticationStorage: storage, transport: transport, logger: logger)
            )
            return try await body(&harness)
        }
    }

    /// The credential every harness call sends.
    static let token = "Bearer test-token-5f2c9d"

    /// How many attempts the logging step saw (one "Sending request" line each).
    var attemptsLogged: Int {
        logs.entries.filter { $0.message.description == "Sending request" }.count
    }

    /// Whether the credential reached no log line.
    var logsAreFreeOfSecrets: Bool {
        !logText.contains("test-token-5f2c9d")
    }

    /// Every log line as text: level, message and all metadata, nested values included.
    var logText: String {
        logs.entries.map { entry in
            "\(entry.level) \(entry.message) \(Self.render(.dictionary(entry.metadata)))"
        }.joined(separator: "\n")
    }

    private static func render(_ value: Logger.MetadataValue) -> String {
        switch value {
        case .string(let text): text
        case .stringConvertible(let value): value.description
        case .array(let values): values.map(render).joined(separator: ",")
        case .dictionary(let values): values.map { "\($0.key)=\(render($0.value))" }.sorted().joined(separator: " ")
        }
    }
}

struct User: Codable, Equatable, Sendable {
    var id: Int
    var name: String
}
