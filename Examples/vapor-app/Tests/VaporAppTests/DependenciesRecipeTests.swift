import Dependencies
import Foundation
import HTTPTypes
import Resourceful
import ResourcefulDependencies
import ResourcefulTesting
import Testing
import UpstreamUsers
import VaporTesting

// The README's recipe: a Vapor route taking its API from swift-dependencies, and a middleware
// choosing the API per request (one upstream per tenant) with `withDependencies`.

/// Runs each request with the API of the tenant its `X-Tenant` header names.
struct TenantAPIMiddleware: AsyncMiddleware {
    let apis: [String: APIDependency]

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        guard let tenant = request.headers.first(name: "X-Tenant"), let api = apis[tenant] else {
            throw Abort(.badRequest)
        }
        return try await withDependencies { $0.api = api } operation: { try await next.respond(to: request) }
    }
}

@Suite struct DependenciesRecipeTests {
    @Test func concurrentRequestsUseTheirOwnTenantsAPI() async throws {
        try await MockServer.withTransport { north, transport in
            try await MockServer.withRunning { south in
                north.stub(.get, "/users/1", try .json(User(id: 1, name: "north-user")))
                south.stub(.get, "/users/1", try .json(User(id: 1, name: "south-user")))
                let apis = [
                    "north": APIDependency(config: APIConfig(baseURL: north.baseURL, service: "north"), transport: transport),
                    "south": APIDependency(config: APIConfig(baseURL: south.baseURL, service: "south"), transport: transport),
                ]
                try await withApp(configure: { app in
                    app.middleware.use(TenantAPIMiddleware(apis: apis))
                    app.get("users", ":id") { request async throws -> String in
                        @Dependency(\.api) var api
                        let id = try request.parameters.require("id", as: Int.self)
                        return try await api.call(ShowUser(id: id)).name
                    }
                }) { app in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for index in 0..<32 {
                            let tenant = index.isMultiple(of: 2) ? "north" : "south"
                            group.addTask {
                                try await app.testing().test(.GET, "users/1", headers: ["X-Tenant": tenant]) { response in
                                    #expect(response.status == .ok)
                                    #expect(response.body.string == "\(tenant)-user")
                                }
                            }
                        }
                        try await group.waitForAll()
                    }
                }
                #expect(north.requests.count == 16)
                #expect(south.requests.count == 16)
            }
        }
    }
}
