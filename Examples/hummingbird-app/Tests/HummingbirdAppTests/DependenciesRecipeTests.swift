import Dependencies
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Resourceful
import ResourcefulDependencies
import ResourcefulTesting
import Testing
import UpstreamUsers

// The README's recipe: a Hummingbird route taking its API from swift-dependencies, and a
// middleware choosing the API per request (one upstream per tenant) with `withDependencies`.

/// `/users/:id`, through `@Dependency(\.api)`.
struct DependencyUsersController<Context: RequestContext>: Sendable {
    @Dependency(\.api) var api

    func addRoutes(to group: RouterGroup<Context>) {
        group.get(":id") { _, context in
            let id = try context.parameters.require("id", as: Int.self)
            return try await api.call(ShowUser(id: id)).name
        }
    }
}

/// Runs each request with the API of the tenant its `X-Tenant` field names.
struct TenantAPIMiddleware<Context: RequestContext>: RouterMiddleware {
    let apis: [String: APIDependency]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let tenant = request.headers[HTTPField.Name("X-Tenant")!], let api = apis[tenant] else {
            throw HTTPError(.badRequest)
        }
        return try await withDependencies { $0.api = api } operation: { try await next(request, context) }
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
                let router = Router()
                router.middlewares.add(TenantAPIMiddleware(apis: apis))
                DependencyUsersController().addRoutes(to: router.group("users"))
                let app = Application(router: router)
                try await app.test(.router) { client in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for index in 0..<32 {
                            let tenant = index.isMultiple(of: 2) ? "north" : "south"
                            group.addTask {
                                try await client.execute(uri: "/users/1", method: .get, headers: [HTTPField.Name("X-Tenant")!: tenant]) { response in
                                    #expect(response.status == .ok)
                                    #expect(String(buffer: response.body) == "\(tenant)-user")
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
