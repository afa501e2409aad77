import Foundation
import HTTPTypes
import OpenAPIFixtures
import Resourceful
import ResourcefulTesting
import Testing

/// The README's sample: the requests `resourceful generate` makes of the OpenAPI Initiative's
/// `petstore-expanded.yaml`, called against a server on loopback.
@Suite struct PetstoreTests {
    @Test func theReadmeSampleSendsWhatTheDocumentDescribes() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/pets", .json(raw: #"[{"id": 1, "name": "Rex", "tag": "dog"}]"#))
            server.stub(.get, "/pets/42", .json(raw: #"{"id": 42, "name": "Tom"}"#))
            server.stub(.post, "/pets", .json(raw: #"{"id": 7, "name": "Rex"}"#))
            server.stub(.delete, "/pets/7", .status(.noContent), .json(raw: #"{"code": 404, "message": "gone"}"#, status: .notFound))
            let config = APIConfig(baseURL: server.baseURL, service: "petstore")
            let transport = AsyncHTTPClientTransport(settings: config.http)
            let api = API(dependencies: APIDependencies(apiConfig: config, authenticationStorage: InMemoryAuthenticationStorage(), transport: transport))
            do {
                let pets = try await api.call(PetstoreExpanded.FindPets(tags: ["dog"], limit: 20))
                let pet = try await api.call(PetstoreExpanded.FindPetById(id: 42))
                let added = try await api.call(PetstoreExpanded.AddPet(parameters: PetstoreExpanded.NewPet(name: "Rex")))
                _ = try await api.call(PetstoreExpanded.DeletePet(id: added.id))
                let gone = try await #require(throws: APIError.self) { try await api.call(PetstoreExpanded.DeletePet(id: added.id)) }
                #expect(pets.map(\.tag) == ["dog"] && pet.name == "Tom" && added.id == 7)
                #expect(gone.errorResponse(as: PetstoreExpanded.ErrorModel.self)?.message == "gone")
                #expect(server.requests.map { "\($0.method) \($0.path) \($0.query)" } == [
                    "GET /pets tags=dog&limit=20", "GET /pets/42 ", "POST /pets ", "DELETE /pets/7 ", "DELETE /pets/7 ",
                ])
                #expect(try server.requests[2].decodeBody(as: [String: String].self) == ["name": "Rex"])
            } catch {
                try? await transport.shutdown()
                throw error
            }
            try await transport.shutdown()
        }
    }
}
