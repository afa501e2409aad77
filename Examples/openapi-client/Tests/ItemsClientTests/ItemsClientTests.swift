import Foundation
import HTTPTypes
import ItemsClient
import Resourceful
import Testing

/// The client generated from the FastAPI app's own `/openapi.json`, against that app under
/// uvicorn: every operation through `api.call`, the five verbs, a 404 and FastAPI's 422 decoded
/// into the generated error types.
@Suite struct ItemsClientTests {
    @Test func everyOperationRunsAgainstTheRealServer() async throws {
        try await FastAPIServer.withRunning { baseURL in
            let config = APIConfig(baseURL: baseURL, service: Items.service)
            let transport = AsyncHTTPClientTransport(settings: config.http)
            let api = API(dependencies: APIDependencies(apiConfig: config, authenticationStorage: InMemoryAuthenticationStorage(), transport: transport))
            do {
                try await callEveryOperation(api)
            } catch {
                try? await transport.shutdown()
                throw error
            }
            try await transport.shutdown()
        }
    }

    private func callEveryOperation(_ api: API) async throws {
        let hammer = try await api.call(Items.CreateItem(parameters: Items.ItemIn(name: "hammer", kind: .tool, priceCents: 1200, tags: ["steel"])))
        let bolt = try await api.call(Items.CreateItem(parameters: Items.ItemIn(name: "bolt", kind: .part, priceCents: 5)))
        #expect(hammer.name == "hammer" && hammer.kind == .tool && hammer.tags == ["steel"])
        #expect(hammer.createdAt == Date(timeIntervalSince1970: 1_767_323_045))

        #expect(try await api.call(Items.ListItems()).map(\.id) == [hammer.id, bolt.id])
        #expect(try await api.call(Items.ListItems(limit: 1)).map(\.id) == [hammer.id])
        #expect(try await api.call(Items.ListItems(tag: ["steel"])).map(\.name) == ["hammer"])
        #expect(try await api.call(Items.ShowItem(itemId: bolt.id)) == bolt)

        let replaced = try await api.call(Items.ReplaceItem(itemId: bolt.id, parameters: Items.ItemIn(name: "nut", kind: .part, priceCents: 4)))
        #expect(replaced.name == "nut" && replaced.id == bolt.id)
        let renamed = try await api.call(Items.RenameItem(itemId: bolt.id, parameters: Items.ItemPatch(name: "wing nut")))
        #expect(renamed.name == "wing nut" && renamed.priceCents == 4)

        let deleted = try await api.call(Items.DeleteItem(itemId: bolt.id))
        #expect(deleted == Empty())

        let missing = try await #require(throws: APIError.self) { try await api.call(Items.ShowItem(itemId: bolt.id)) }
        #expect(missing.status == .notFound)
        guard case .status404(let notFound) = missing.errorResponse(as: Items.ShowItem.Errors.self) else {
            Issue.record("the 404 body was not decoded: \(missing)")
            return
        }
        #expect(notFound.detail == "no item \(bolt.id)")

        let invalid = try await #require(throws: APIError.self) {
            try await api.call(Items.CreateItem(parameters: Items.ItemIn(name: "", kind: .unknown("gadget"), priceCents: -1)))
        }
        #expect(invalid.status?.code == 422)
        let validation = try #require(invalid.errorResponse(as: Items.HttpValidationError.self))
        let fields = Set((validation.detail ?? []).compactMap { error -> String? in
            guard case .string(let field) = error.loc.last else { return nil }
            return field
        })
        #expect(fields == ["name", "kind", "price_cents"])
    }
}
