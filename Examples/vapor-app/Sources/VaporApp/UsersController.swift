import Resourceful
import UpstreamUsers
import Vapor

/// `/users`: reads users from the upstream API.
struct UsersController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        let users = routes.grouped("users")
        users.get(use: index)
        users.get(":id", use: show)
    }

    @Sendable func index(request: Request) async throws -> [UserResponse] {
        let filter = request.query[String.self, at: "name"]
        let users = try await forwarding { try await request.api.call(ListUsers(nameContains: filter)) }
        return users.map(UserResponse.init)
    }

    @Sendable func show(request: Request) async throws -> UserResponse {
        guard let id = request.parameters.get("id", as: Int.self) else { throw Abort(.badRequest) }
        return UserResponse(try await forwarding { try await request.api.call(ShowUser(id: id)) })
    }
}

/// A user as this app shows it.
struct UserResponse: Content, Equatable {
    var id: Int
    var displayName: String

    init(_ user: User) {
        id = user.id
        displayName = user.name
    }
}

/// Runs an upstream call, turning its failure into the status this app answers with.
func forwarding<T>(_ call: () async throws -> T) async throws -> T {
    do {
        return try await call()
    } catch let error as APIError {
        throw Abort(HTTPResponseStatus(statusCode: statusForUpstreamFailure(error)))
    }
}
