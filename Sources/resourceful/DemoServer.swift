import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting

/// Serves a small in-memory "users" resource under `/v1` from a ``MockServer``.
enum DemoServer {
    /// Starts the server; requests without `authorization` as their `Authorization` get `401`.
    static func start(requiring authorization: String) async throws -> MockServer {
        let server = try await MockServer.start()
        let store = Locked<(nextID: Int, users: [Int: User])>((
            3,
            [
                1: User(id: 1, name: "Ada Lovelace", email: "ada@example.com"),
                2: User(id: 2, name: "Grace Hopper", email: "grace@example.com"),
            ]
        ))
        server.route(.get, "/v1/users") { request in
            guard request.headerFields[.authorization] == authorization else { return unauthorized() }
            let filter = request.queryItems.first { $0.name == "nameContains" }?.value
            let limit = request.queryItems.first { $0.name == "limit" }.flatMap { Int($0.value) } ?? .max
            let users = store.withLock { $0.users.values.sorted { $0.id < $1.id } }
                .filter { filter == nil || $0.name.localizedCaseInsensitiveContains(filter ?? "") }
            return try .json(Array(users.prefix(limit)))
        }
        server.route(.get, "/v1/users/:id") { request in
            guard request.headerFields[.authorization] == authorization else { return unauthorized() }
            guard let id = request.pathParameters["id"].flatMap(Int.init),
                let user = store.withLock({ $0.users[id] })
            else { return notFound() }
            return try .json(user)
        }
        server.route(.post, "/v1/users") { request in
            guard request.headerFields[.authorization] == authorization else { return unauthorized() }
            struct NewUser: Decodable { var name: String; var email: String }
            let new = try request.decodeBody(as: NewUser.self)
            let user = store.withLock { state in
                let user = User(id: state.nextID, name: new.name, email: new.email)
                state.users[user.id] = user
                state.nextID += 1
                return user
            }
            return try .json(user, status: .created)
        }
        server.route(.patch, "/v1/users/:id") { request in
            guard request.headerFields[.authorization] == authorization else { return unauthorized() }
            struct Change: Decodable { var name: String }
            let change = try request.decodeBody(as: Change.self)
            guard let id = request.pathParameters["id"].flatMap(Int.init) else { return notFound() }
            let user = store.withLock { state -> User? in
                state.users[id]?.name = change.name
                return state.users[id]
            }
            return try user.map { try .json($0) } ?? notFound()
        }
        server.route(.delete, "/v1/users/:id") { request in
            guard request.headerFields[.authorization] == authorization else { return unauthorized() }
            guard let id = request.pathParameters["id"].flatMap(Int.init),
                store.withLock({ $0.users.removeValue(forKey: id) }) != nil
            else { return notFound() }
            return .status(.noContent)
        }
        return server
    }

    private static func unauthorized() -> MockResponse {
        .json(raw: #"{"message":"missing or wrong credentials"}"#, status: .unauthorized)
    }

    private static func notFound() -> MockResponse {
        .json(raw: #"{"message":"no such user"}"#, status: .notFound)
    }
}
