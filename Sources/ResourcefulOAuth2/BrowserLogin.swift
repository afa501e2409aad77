import Crypto
public import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOPosix
public import Resourceful

extension OAuth2AuthenticationStorage {
    /// Logs a person in through a browser with the authorization code grant, PKCE (RFC 7636,
    /// `S256`) and a loopback redirect (RFC 8252): listens on a free port of `127.0.0.1`, hands
    /// the authorization address to `open` (print it, or start a browser), waits for the server's
    /// redirect to `http://127.0.0.1:PORT/callback`, checks its `state` (and `iss`, when the
    /// server sends one), and exchanges the code with its verifier. The refresh token is stored
    /// in the refresh token storage; the access token is kept for the next calls.
    ///
    /// - Parameter timeout: How long the person has to approve.
    /// - Throws: ``OAuth2Error``: ``OAuth2Error/Kind/loginRequired`` when the person denied the
    ///   login or did not approve it in time.
    @discardableResult
    public func logInWithBrowser(
        service: String,
        timeout: Duration = .seconds(300),
        open: @escaping @Sendable (URL) async throws -> Void
    ) async throws(OAuth2Error) -> Credential {
        let deadline = ContinuousClock.now + timeout
        let endpoints = try await endpoints(deadline: min(deadline, ContinuousClock.now + .seconds(30)))
        guard let authorization = endpoints.authorization else {
            throw OAuth2Error(.configuration, "the server has no authorization endpoint (authentication.oauth2.authorizationEndpoint)")
        }
        let verifier = Self.randomToken(bytes: 32)
        let challenge = Self.base64URL(Data(SHA256.hash(data: Data(verifier.utf8))))
        let state = Self.randomToken(bytes: 16)
        let settings = self.settings
        let callback = try await LoopbackRedirect.receive(deadline: deadline) { redirectURI in
            var components = URLComponents(url: authorization, resolvingAgainstBaseURL: false)
            var items = components?.queryItems ?? []
            items += [
                URLQueryItem(name: "response_type", value: "code"),
                URLQueryItem(name: "client_id", value: settings.clientID),
                URLQueryItem(name: "redirect_uri", value: redirectURI),
                URLQueryItem(name: "state", value: state),
                URLQueryItem(name: "code_challenge", value: challenge),
                URLQueryItem(name: "code_challenge_method", value: "S256"),
            ]
            if !settings.scopes.isEmpty { items.append(URLQueryItem(name: "scope", value: settings.scopes.joined(separator: " "))) }
            components?.queryItems = items
            guard let url = components?.url else { throw OAuth2Error(.configuration, "the authorization endpoint cannot take a query") }
            try await open(url)
        }
        guard callback.parameters["state"] == state else {
            throw OAuth2Error(.invalidResponse, "the redirect's state is not the one sent (another login, or a forged redirect)")
        }
        if let issuer = callback.parameters["iss"], let configured = settings.issuer, !AuthorizationServer.sameIssuer(issuer, configured) {
            throw OAuth2Error(.invalidResponse, "the redirect names another issuer")
        }
        if let error = callback.parameters["error"] {
            let code = OAuth2Grammar.all(error, OAuth2Grammar.isTokenByte) && error.utf8.count <= 64 ? error : "error"
            throw OAuth2Error(code == "access_denied" ? .loginRequired : .refused, "the browser login was not approved", serverError: code)
        }
        guard let code = callback.parameters["code"], !code.isEmpty else {
            throw OAuth2Error(.invalidResponse, "the redirect carries no code")
        }
        let token = try await request(
            [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", callback.redirectURI), ("code_verifier", verifier)],
            endpoints: endpoints,
            deadline: min(deadline, ContinuousClock.now + .seconds(30)),
            storingRefreshTokenFor: service,
            withoutScope: true
        )
        remember(token, for: service)
        return Credential(header: token.header, expiresAt: token.expiresAt)
    }

    /// `bytes` random bytes, base64url without padding.
    static func randomToken(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return base64URL(Data((0..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) }))
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// The one request a loopback redirect brings (RFC 8252 §7.3).
struct LoopbackRedirect: Sendable {
    /// `http://127.0.0.1:PORT/callback`, as sent in the authorization request.
    var redirectURI: String
    /// The redirect's query parameters.
    var parameters: [String: String]

    /// Listens on a free port of `127.0.0.1`, runs `ready` with the redirect URI, and returns the
    /// first request to `/callback` (any other path is answered 404), by `deadline`.
    static func receive(
        deadline: ContinuousClock.Instant,
        ready: @escaping @Sendable (String) async throws -> Void
    ) async throws(OAuth2Error) -> LoopbackRedirect {
        let server: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>
        do {
            server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .bind(host: "127.0.0.1", port: 0) { child in
                    child.eventLoop.makeCompletedFuture {
                        try child.pipeline.syncOperations.configureHTTPServerPipeline()
                        return try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(wrappingChannelSynchronously: child)
                    }
                }
        } catch {
            throw OAuth2Error(.configuration, "no loopback port could be opened for the redirect")
        }
        guard let port = server.channel.localAddress?.port else {
            try? await server.channel.close()
            throw OAuth2Error(.configuration, "no loopback port could be opened for the redirect")
        }
        let redirectURI = "http://127.0.0.1:\(port)/callback"
        do {
            return try await withThrowingTaskGroup(of: LoopbackRedirect?.self) { group in
                group.addTask {
                    try await server.executeThenClose { inbound in
                        for try await connection in inbound {
                            // A connection that fails (a browser's stray request reset) ends
                            // only itself.
                            if let parameters = try? await answer(connection) {
                                return LoopbackRedirect(redirectURI: redirectURI, parameters: parameters)
                            }
                        }
                        return nil
                    }
                }
                group.addTask {
                    do {
                        try await ready(redirectURI)
                    } catch let error as OAuth2Error {
                        try? await server.channel.close()
                        throw error
                    } catch {
                        try? await server.channel.close()
                        throw OAuth2Error(.loginRequired, "the authorization address could not be opened: \(OAuth2AuthenticationStorage.describe(error))")
                    }
                    return nil
                }
                group.addTask {
                    try? await Task.sleep(until: deadline)
                    try? await server.channel.close()
                    if Task.isCancelled { return nil }
                    throw OAuth2Error(.loginRequired, "the browser login was not approved in time")
                }
                while let result = try await group.next() {
                    if let redirect = result {
                        group.cancelAll()
                        return redirect
                    }
                }
                throw OAuth2Error(.loginRequired, "the browser login was not approved in time")
            }
        } catch let error as OAuth2Error {
            try? await server.channel.close()
            throw error
        } catch {
            try? await server.channel.close()
            throw OAuth2Error(.loginRequired, "the browser login was cancelled")
        }
    }

    /// Answers one connection's requests: the query of a request to `/callback`, after a page
    /// saying the window can be closed; `nil` for a connection that brought none.
    private static func answer(_ connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>) async throws -> [String: String]? {
        try await connection.executeThenClose { inbound, outbound in
            var head: HTTPRequestHead?
            for try await part in inbound {
                switch part {
                case .head(let requestHead): head = requestHead
                case .body: continue
                case .end:
                    guard let request = head else { continue }
                    let components = URLComponents(string: request.uri)
                    let isCallback = components?.path == "/callback" && request.method == .GET
                    let text = isCallback ? "You can close this window and go back to the terminal.\n" : "Not found\n"
                    var headers = HTTPHeaders([("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", "\(text.utf8.count)"), ("Connection", "close")])
                    headers.add(name: "Cache-Control", value: "no-store")
                    // The page is a courtesy: the redirect counts even when the browser has gone.
                    try? await outbound.write(.head(HTTPResponseHead(version: .http1_1, status: isCallback ? .ok : .notFound, headers: headers)))
                    try? await outbound.write(.body(.byteBuffer(ByteBuffer(string: text))))
                    try? await outbound.write(.end(nil))
                    guard isCallback else { return nil }
                    var parameters: [String: String] = [:]
                    for item in components?.queryItems ?? [] where parameters[item.name] == nil {
                        parameters[item.name] = item.value ?? ""
                    }
                    return parameters
                }
            }
            return nil
        }
    }
}
