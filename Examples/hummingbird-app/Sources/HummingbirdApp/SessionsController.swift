import Hummingbird
import Resourceful
import UpstreamUsers

/// `POST /login`: exchanges credentials for a token at the upstream API. The upstream request
/// opts out of body logging, so the password never reaches a log line.
struct SessionsController<Context: RequestContext>: Sendable {
    let api: API

    struct Credentials: Decodable {
        var username: String
        var password: String
    }

    struct Token: ResponseEncodable, Equatable {
        var token: String
        var expiresIn: Int
    }

    func addRoutes(to group: RouterGroup<Context>) {
        group.post(use: login)
    }

    @Sendable func login(request: Request, context: Context) async throws -> Token {
        let credentials = try await request.decode(as: Credentials.self, context: context)
        let session = try await api.forwarding(context) {
            try await $0.call(Login(username: credentials.username, password: credentials.password))
        }
        return Token(token: session.token, expiresIn: session.expiresIn)
    }
}
