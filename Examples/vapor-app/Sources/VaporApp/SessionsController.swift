import Resourceful
import UpstreamUsers
import Vapor

/// `POST /login`: exchanges credentials for a token at the upstream API. The upstream request opts
/// out of body logging, so the password never reaches a log line.
struct SessionsController: RouteCollection {
    struct Credentials: Content {
        var username: String
        var password: String
    }

    struct Token: Content, Equatable {
        var token: String
        var expiresIn: Int
    }

    func boot(routes: any RoutesBuilder) throws {
        routes.post("login", use: login)
    }

    @Sendable func login(request: Request) async throws -> Token {
        let credentials = try request.content.decode(Credentials.self)
        let session = try await forwarding {
            try await request.api.call(Login(username: credentials.username, password: credentials.password))
        }
        return Token(token: session.token, expiresIn: session.expiresIn)
    }
}
