import Foundation
import HTTPTypes
import Logging
import PostgresNIO
import ProcessTestSupport
import Resourceful
import ResourcefulOAuth2
import ResourcefulPostgres
import ResourcefulTesting
import Testing

/// The README's fleet sample, run against the suite's PostgreSQL and a MockServer that is both
/// the authorization server and the upstream.
@Suite(.postgres)
struct ReadmeFleetSampleTests {
    struct Secrets: SecretStorage {
        func secret(named name: String) async throws -> String? { name == "orders-client-secret" ? "orders-secret" : nil }
    }

    @Test("Two instances built as the README shows share one token and one budget")
    func theSampleSharesTokensAndBudgets() async throws {
        let server = try suiteServer()
        try await MockServer.withRunning { mock in
            mock.stub(.post, "/token", .json(raw: #"{"access_token": "orders-token", "token_type": "Bearer", "expires_in": 3600}"#))
            mock.stub(.get, "/v1/orders", .json(raw: "[]"))
            let tokenEndpoint = mock.baseURL.appendingPathComponent("token")
            let sealingKey = Array(repeating: UInt8(42), count: 32)
            let logger = Logger(label: "readme")
            let secrets = Secrets()
            var config = APIConfig(baseURL: mock.baseURL.appendingPathComponent("v1"), service: "orders")
            config.limits.rate = RateBudget(requestsPerSecond: 1, burst: 1)
            let settings = config

            func instance() async throws -> (PostgresSharedState, API) {
                // A statement's time that a loaded machine (the suite's other tests, eight worker
                // processes) does not use up: past it, an instance would ask alone, by design.
                var options = PostgresSharedState.Options.patient
                options.statementTimeout = .seconds(30)
                let shared = PostgresSharedState(configuration: connection(to: server), options: options, logger: logger)
                let keys = try SharedStateKeys(current: "2026-11", keys: ["2026-11": sealingKey])
                var dependencies = try await APIDependencies.live(config: settings)
                dependencies.authenticationStorage = try await OAuth2AuthenticationStorage(
                    settings: OAuth2Settings(clientID: "orders", tokenEndpoint: tokenEndpoint),
                    transport: dependencies.transport, clientSecret: secrets,
                    sharedTokens: PostgresTokenCache(sharedState: shared, keys: keys))
                let api = API(dependencies: dependencies, middlewares: API.defaultMiddlewares(sharedState: shared.state))
                return (shared, api)
            }

            let (firstState, first) = try await instance()
            let (secondState, second) = try await instance()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await firstState.run() }
                group.addTask { await secondState.run() }
                defer { group.cancelAll() }
                let orders = AdHocRequest<[Int], Empty>(.index, "orders")
                let start = ContinuousClock.now
                _ = try await first.call(orders)
                _ = try await second.call(orders)
                // One request a second for both: the second instance waited for the first's place.
                #expect(ContinuousClock.now - start >= .milliseconds(900))
                try await first.shutdown()
                try await second.shutdown()
            }
            #expect(mock.requests.filter { $0.path == "/token" }.count == 1)
            #expect(mock.requests.filter { $0.path == "/v1/orders" }.allSatisfy { $0.headerFields[.authorization] == "Bearer orders-token" })
        }
    }
}
