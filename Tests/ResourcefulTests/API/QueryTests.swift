import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

/// A request's own query, for any verb and beside a body, and the configured base query items.
@Suite struct QueryTests {
    struct Charge: Codable, Sendable, Equatable { var amount: Int }
    struct Expand: Encodable, Sendable { var expand: [String] }
    struct Filter: Encodable, Sendable {
        var tags: [String]
        var page: Int
        var range: Range
        var since: Date
        struct Range: Encodable, Sendable { var min: Int; var max: Int }
    }

    struct CreateCharge: ResourceRequest {
        typealias ResourceType = Charge
        let verb = ResourceVerb.create
        let path: ResourcePath = "charges"
        let parameters = Charge(amount: 500)
        let query = Expand(expand: ["customer", "invoice"])
    }

    struct PatchCharge: ResourceRequest {
        typealias ResourceType = Charge
        struct Version: Encodable, Sendable { var apiVersion: String }
        let verb = ResourceVerb.update
        let path: ResourcePath = "charges/7"
        let parameters = Charge(amount: 600)
        let query = Version(apiVersion: "2025-01-01")
        var updateMethod: UpdateMethod { .patch }
    }

    /// The same filter as query parameters of a show, or as the query of a create.
    struct ShowFiltered: ResourceRequest {
        typealias ResourceType = Empty
        let verb = ResourceVerb.show
        let path: ResourcePath = "things"
        let parameters: Filter
    }

    struct CreateFiltered: ResourceRequest {
        typealias ResourceType = Empty
        let verb = ResourceVerb.create
        let path: ResourcePath = "things"
        let query: Filter
    }

    struct ShowWithBoth: ResourceRequest {
        typealias ResourceType = Empty
        let verb = ResourceVerb.show
        let path: ResourcePath = "things/1"
        let parameters = Expand(expand: ["a"])
        let query = PatchCharge.Version(apiVersion: "v2")
    }

    struct DeleteWithQuery: ResourceRequest {
        typealias ResourceType = Empty
        let verb = ResourceVerb.delete
        let path: ResourcePath = "things/1"
        let query = PatchCharge.Version(apiVersion: "v3")
    }

    static let filter = Filter(tags: ["a b", "c&d"], page: 2, range: .init(min: 1, max: 9), since: Date(timeIntervalSince1970: 1_700_000_000))

    @Test func createAndUpdateSendABodyAndAQuery() async throws {
        try await Harness.run { harness in
            harness.server.route(.post, "/v1/charges") { request in .json(raw: request.body, status: .created) }
            harness.server.route(.patch, "/v1/charges/7") { request in .json(raw: request.body) }
            #expect(try await harness.api.call(CreateCharge()) == Charge(amount: 500))
            #expect(try await harness.api.call(PatchCharge()) == Charge(amount: 600))
            let create = try #require(harness.server.requests.first)
            #expect(create.query == "expand%5B%5D=customer&expand%5B%5D=invoice")
            #expect(try create.decodeBody(as: Charge.self) == Charge(amount: 500))
            let patch = try #require(harness.server.requests.last)
            #expect(patch.method == .patch)
            #expect(patch.query == "apiVersion=2025-01-01")
            #expect(try patch.decodeBody(as: Charge.self) == Charge(amount: 600))
        }
    }

    @Test func aQueryIsEncodedExactlyAsQueryParametersAre() async throws {
        try await Harness.run { harness in
            let asParameters = try await harness.api.transportRequest(for: ShowFiltered(parameters: Self.filter))
            let asQuery = try await harness.api.transportRequest(for: CreateFiltered(query: Self.filter))
            let query = { (url: String) in url.split(separator: "?", maxSplits: 1).last.map(String.init) }
            #expect(query(asParameters.url) == query(asQuery.url))
            #expect(asQuery.url.contains("tags%5B%5D=a%20b&tags%5B%5D=c%26d"))
            #expect(asQuery.body == nil)
        }
    }

    @Test func showAndDeleteSendParametersThenTheQuery() async throws {
        try await Harness.run { harness in
            let show = try await harness.api.transportRequest(for: ShowWithBoth())
            #expect(show.url.hasSuffix("/v1/things/1?expand%5B%5D=a&apiVersion=v2"))
            let delete = try await harness.api.transportRequest(for: DeleteWithQuery())
            #expect(delete.url.hasSuffix("/v1/things/1?apiVersion=v3"))
        }
    }

    @Test func baseQueryItemsGoFirstAndARequestsOwnItemReplacesOne() async throws {
        try await Harness.run(configure: { config in
            config.baseQueryItems = ["apiVersion": "2024-01-01", "key": "k3y-5ecr3t"]
        }) { harness in
            harness.server.route(.delete, "/v1/things/1") { _ in .status(.noContent) }
            let plain = try await harness.api.transportRequest(for: AdHocRequest<Empty, Empty>(.show, "things"))
            #expect(plain.url.hasSuffix("/v1/things?apiVersion=2024-01-01&key=k3y-5ecr3t"))
            let create = try await harness.api.transportRequest(for: CreateCharge())
            #expect(create.url.hasSuffix("/v1/charges?apiVersion=2024-01-01&key=k3y-5ecr3t&expand%5B%5D=customer&expand%5B%5D=invoice"))
            _ = try await harness.api.call(DeleteWithQuery())
            #expect(harness.server.requests.last?.query == "key=k3y-5ecr3t&apiVersion=v3")
            // `key` is a masked name: the log lines carry it masked.
            #expect(harness.logText.contains("key=***"))
            #expect(!harness.logText.contains("k3y-5ecr3t"))
        }
    }

    @Test func aPathWithALiteralQueryKeepsIt() async throws {
        try await Harness.run(configure: { $0.baseQueryItems = ["v": "1"] }) { harness in
            let request = try await harness.api.transportRequest(for: AdHocRequest<Empty, Empty>(.show, ResourcePath(encoded: "search?q=x")))
            #expect(request.url.hasSuffix("/v1/search?q=x&v=1"))
        }
    }
}
