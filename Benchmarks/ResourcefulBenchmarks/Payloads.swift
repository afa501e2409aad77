import Foundation
import Resourceful

/// The resource every benchmark reads and writes.
struct User: Codable, Sendable, Equatable {
    var id: Int
    var name: String
    var email: String
    var active: Bool
    var score: Double
    var tags: [String]
    var createdAt: String
}

enum Payloads {
    static func user(_ id: Int) -> User {
        User(id: id, name: "User \(id)", email: "user\(id)@example.com", active: id % 2 == 0, score: Double(id) * 1.5,
             tags: ["alpha", "beta", "gamma"], createdAt: "2024-05-01T12:00:00Z")
    }

    static let showJSON: Data = encode(user(1))
    static let indexJSON: Data = encode((1...50).map(user))
    static let createBody = NewUser(name: "New User", email: "new@example.com", password: "not-logged", tags: ["x", "y"])

    struct NewUser: Encodable, Sendable {
        var name: String
        var email: String
        var password: String
        var tags: [String]
    }

    private static func encode(_ value: some Encodable) -> Data {
        (try? JSONEncoder().encode(value)) ?? Data()
    }
}

struct ShowUser: ResourceRequest {
    typealias ResourceType = User
    let verb = ResourceVerb.show
    let path: ResourcePath = "users/1"
}

struct ListUsers: ResourceRequest {
    typealias ResourceType = [User]
    struct Parameters: Encodable, Sendable { var page: Int; var tags: [String] }
    let verb = ResourceVerb.index
    let path: ResourcePath = "users"
    let parameters = Parameters(page: 1, tags: ["alpha"])
}

struct CreateUser: ResourceRequest {
    typealias ResourceType = User
    let verb = ResourceVerb.create
    let path: ResourcePath = "users"
    let parameters = Payloads.createBody
}

/// The index request (query string and all) answered with one user, for the in-memory transport.
struct ListUsersAnswered: ResourceRequest {
    typealias ResourceType = User
    let verb = ResourceVerb.index
    let path: ResourcePath = "users"
    let parameters = ListUsers.Parameters(page: 1, tags: ["alpha"])
}
