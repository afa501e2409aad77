import Foundation
import Resourceful

/// The sample resource the demo serves and calls.
struct User: Codable, Equatable, Sendable {
    var id: Int
    var name: String
    var email: String
}

struct ListUsers: ResourceRequest {
    typealias ResourceType = [User]
    struct Parameters: Encodable, Sendable {
        var nameContains: String?
        var limit: Int
    }
    let verb = ResourceVerb.index
    let path: ResourcePath = "users"
    let parameters: Parameters
}

struct ShowUser: ResourceRequest {
    typealias ResourceType = User
    let verb = ResourceVerb.show
    let path: ResourcePath
    init(id: Int) { path = "users/\(id)" }
}

struct CreateUser: ResourceRequest {
    typealias ResourceType = User
    struct Parameters: Encodable, Sendable {
        var name: String
        var email: String
        var password: String
    }
    let verb = ResourceVerb.create
    let path: ResourcePath = "users"
    let parameters: Parameters
}

struct RenameUser: ResourceRequest {
    typealias ResourceType = User
    struct Parameters: Encodable, Sendable { var name: String }
    let verb = ResourceVerb.update
    let path: ResourcePath
    let parameters: Parameters
    func configure(_ options: inout RequestOptions) { options.updateMethod = .patch }
    init(id: Int, name: String) {
        path = "users/\(id)"
        parameters = Parameters(name: name)
    }
}

struct DeleteUser: ResourceRequest {
    typealias ResourceType = Empty
    let verb = ResourceVerb.delete
    let path: ResourcePath
    init(id: Int) { path = "users/\(id)" }
}
