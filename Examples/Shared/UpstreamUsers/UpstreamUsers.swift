import HTTPTypes
import Resourceful

/// A user of the upstream API both example apps call.
public struct User: Codable, Equatable, Sendable {
    public var id: Int
    public var name: String

    public init(id: Int, name: String) {
        self.id = id
        self.name = name
    }
}

/// `GET users`.
public struct ListUsers: ResourceRequest {
    public typealias ResourceType = [User]
    public struct Parameters: Encodable, Sendable {
        public var nameContains: String?
    }
    public let verb = ResourceVerb.index
    public let path: ResourcePath = "users"
    public let parameters: Parameters

    public init(nameContains: String? = nil) {
        parameters = Parameters(nameContains: nameContains)
    }
}

/// `GET users/<id>`.
public struct ShowUser: ResourceRequest {
    public typealias ResourceType = User
    public let verb = ResourceVerb.show
    public let path: ResourcePath

    public init(id: Int) {
        path = "users/\(id)"
    }
}

/// `POST sessions`: exchanges a name and password for a token. Its body never reaches a log.
public struct Login: ResourceRequest {
    public typealias ResourceType = Session
    public struct Parameters: Encodable, Sendable {
        public var username: String
        public var password: String
    }
    public let verb = ResourceVerb.create
    public let path: ResourcePath = "sessions"
    public let parameters: Parameters
    public var shouldRedactRequestBody: Bool { true }
    public var shouldRedactResponseBody: Bool { true }

    public init(username: String, password: String) {
        parameters = Parameters(username: username, password: password)
    }
}

/// What `Login` answers.
public struct Session: Codable, Equatable, Sendable {
    public var token: String
    public var expiresIn: Int

    public init(token: String, expiresIn: Int) {
        self.token = token
        self.expiresIn = expiresIn
    }
}

/// The status a server app answers with when an upstream call fails: the upstream's own 404 and
/// 401, and 502 Bad Gateway for anything else, so upstream details are not passed on.
public func statusForUpstreamFailure(_ error: APIError) -> Int {
    switch error.status?.code {
    case 404: 404
    case 401, 403: 401
    default: error.kind == .timeout ? 504 : 502
    }
}
