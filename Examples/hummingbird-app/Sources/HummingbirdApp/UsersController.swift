import Hummingbird
import Resourceful
import UpstreamUsers

/// `/users`: reads users from the upstream API.
struct UsersController<Context: RequestContext>: Sendable {
    let api: API

    func addRoutes(to group: RouterGroup<Context>) {
        group.get(use: index)
        group.get(":id", use: show)
    }

    @Sendable func index(request: Request, context: Context) async throws -> [UserResponse] {
        let filter = request.uri.queryParameters.get("name")
        let users = try await api.forwarding(context) { try await $0.call(ListUsers(nameContains: filter)) }
        return users.map(UserResponse.init)
    }

    @Sendable func show(request: Request, context: Context) async throws -> UserResponse {
        let id = try context.parameters.require("id", as: Int.self)
        return UserResponse(try await api.forwarding(context) { try await $0.call(ShowUser(id: id)) })
    }
}

/// A user as this app shows it.
struct UserResponse: ResponseCodable, Equatable {
    var id: Int
    var displayName: String

    init(_ user: User) {
        id = user.id
        displayName = user.name
    }
}

extension API {
    /// Runs an upstream call under the incoming request's logger (so its lines carry the
    /// request's id), turning a failure into the status this app answers with.
    func forwarding<T: Sendable>(_ context: some RequestContext, _ call: (API) async throws -> T) async throws -> T {
        do {
            return try await call(with(logger: context.logger))
        } catch let error as APIError {
            throw HTTPError(.init(code: statusForUpstreamFailure(error)))
        }
    }
}
