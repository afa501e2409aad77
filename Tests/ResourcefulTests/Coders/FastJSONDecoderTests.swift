import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

/// The fast decoder at work: through `api.call` against a real server, and in the cases the
/// differential tests do not reach.
@Suite struct FastJSONDecoderTests {
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

    @Test func aMalformedNumberNamesItsValue() throws {
        let error = #expect(throws: DecodingError.self) {
            _ = try FastJSONDecoder().decode([[String: Int]].self, from: Data(#"[{"a":1},{"b":01}]"#.utf8))
        }
        guard case .dataCorrupted(let context) = error else { return #expect(Bool(false), "not dataCorrupted: \(String(describing: error))") }
        #expect(context.codingPath.map(\.stringValue) == ["Index 1", "b"])
        #expect(context.debugDescription.contains("leading zero"))
    }

    /// A decoder kept past `decode` (as some `init(from:)` do) still reads its document.
    @Test func aDecoderKeptAfterDecodingStillWorks() throws {
        final class Keeper: Decodable {
            var later: (any Decoder)?
            required init(from decoder: any Decoder) throws {
                later = try decoder.container(keyedBy: StringCodingKey.self).superDecoder(forKey: StringCodingKey("kept"))
            }
        }
        let keeper = try FastJSONDecoder().decode(Keeper.self, from: Data(#"{"kept":{"name":"still here"}}"#.utf8))
        let name = try keeper.later?.container(keyedBy: StringCodingKey.self).decode(String.self, forKey: StringCodingKey("name"))
        #expect(name == "still here")
    }

    @Test func largeObjectsUseTheFirstOfDuplicateKeys() throws {
        struct Wanted: Decodable, Equatable { var k3: Int; var k29: Int; var missing: Int? }
        let members = (0..<30).map { "\"k\($0)\":\($0)" } + ["\"k3\":-1"]
        let json = Data(("{" + members.joined(separator: ",") + "}").utf8)
        let fast = try FastJSONDecoder().decode(Wanted.self, from: json)
        #expect(fast == Wanted(k3: 3, k29: 29, missing: nil))
        #expect(fast == (try JSONDecoder().decode(Wanted.self, from: json)))
    }

    @Test func liveDependenciesUseTheFastDecoderByDefault() {
        let dependencies = APIDependencies(apiConfig: APIConfig(baseURL: URL(string: "http://127.0.0.1:9")!, service: "s"), httpClient: StubHTTPClient { _ in TransportResponse(status: .ok) })
        #expect(dependencies.responseDecoder is FastJSONDecoder)
        var config = dependencies.apiConfig
        config.coding.decoder = .foundation
        #expect(APIDependencies(apiConfig: config, httpClient: StubHTTPClient { _ in TransportResponse(status: .ok) }).responseDecoder is JSONDecoder)
    }
}
