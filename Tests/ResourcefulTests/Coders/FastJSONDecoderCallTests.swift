import Foundation
import HTTPTypes
import Resourceful
import ResourcefulJSON
import ResourcefulTesting
import Testing

/// The fast decoder at work: through `api.call` against a real server, and in the cases the
/// differential tests do not reach.
@Suite struct FastJSONDecoderCallTests {
    struct Account: Codable, Equatable, Sendable {
        var accountId: Int
        var displayName: String
        var createdAt: Date
        var balance: Decimal
        var tags: [String]
        var owner: Owner?

        struct Owner: Codable, Equatable, Sendable { var userName: String }
    }

    struct ListAccounts: ResourceRequest {
        typealias ResourceType = [Account]
        let verb = ResourceVerb.index
        let path: ResourcePath = "accounts"
    }

    static let accounts = #"""
        [{"account_id":1,"display_name":"Ada \u00e9","created_at":"2024-05-01T12:00:00Z","balance":12.50,"tags":["a"],"owner":{"user_name":"ada"}},
         {"account_id":2,"display_name":"Bo","created_at":"2024-05-02T08:30:00Z","balance":-3,"tags":[],"owner":null}]
        """#

    @Test func decodesThroughAPICallLikeJSONDecoder() async throws {
        try await Harness.run(configure: { $0.coding = .init(keyStrategy: .snakeCase, dateStrategy: .iso8601) }) { harness in
            harness.server.stub(.get, "/v1/accounts", .json(raw: Self.accounts), .json(raw: Self.accounts))
            harness.dependencies.responseDecoder = FastJSONDecoder(coding: harness.dependencies.apiConfig.coding)
            let fast = try await harness.api.call(ListAccounts())
            harness.dependencies.responseDecoder = JSONDecoder(coding: harness.dependencies.apiConfig.coding)
            let foundation = try await harness.api.call(ListAccounts())
            #expect(fast == foundation)
            #expect(fast.map(\.accountId) == [1, 2])
            #expect(fast[0].owner?.userName == "ada")
            #expect(fast[0].balance == Decimal(string: "12.5"))
        }
    }

    @Test func aBadValueFailsTheCallWithItsPathAndNoContent() async throws {
        let secret = "s3cr3t-value-77"
        try await Harness.run(configure: { $0.coding = .init(keyStrategy: .snakeCase, dateStrategy: .iso8601) }) { harness in
            let body = Self.accounts.replacingOccurrences(of: #""balance":-3"#, with: #""balance":"\#(secret)""#)
            harness.server.stub(.get, "/v1/accounts", .json(raw: body))
            harness.dependencies.responseDecoder = FastJSONDecoder(coding: harness.dependencies.apiConfig.coding)
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(ListAccounts()) }
            #expect(error?.kind == .decodingFailed)
            #expect(error?.codingPath == "[1].balance")
            #expect(!String(describing: error).contains(secret))
        }
    }

    @Test func liveDependenciesUseTheFastDecoderByDefault() {
        let dependencies = APIDependencies(apiConfig: APIConfig(baseURL: URL(string: "http://127.0.0.1:9")!, service: "s"), transport: StubTransport { _ in TransportResponse(status: .ok) })
        #expect(dependencies.responseDecoder is FastJSONDecoder)
        var config = dependencies.apiConfig
        config.coding.decoder = .foundation
        #expect(APIDependencies(apiConfig: config, transport: StubTransport { _ in TransportResponse(status: .ok) }).responseDecoder is JSONDecoder)
    }
}
