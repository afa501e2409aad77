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
    /// redirect to `http://127.0.0.1:PORT/callback` with the `state` it sent (other requests to
    /// the port are answered and ignored, each within a time limit), checks its `iss` (RFC 9207:
    /// required when the metadata says `authorization_response_iss_parameter_supported`), and
    /// exchanges the code with its verifier. The refresh token is stored
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
        let callback = try await LoopbackRedirect.receive(state: state, deadline: deadline) { redirectURI in
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
        // RFC 9207: `iss` tells which server answered (a mix-up attack sends another's answer
        // here); it is required when the metadata says the server sends it.
        if let issuer = callback.parameters["iss"], let configured = settings.issuer, !AuthorizationServer.sameIssuer(issuer, configured) {
            throw OAuth2Error(.invalidResponse, "the redirect names another issuer")
        }
        if let error = callback.parameters["error"] {
            // Only a code RFC 6749 defines is shown (``ErrorResponse/code``): any other is free text.
            throw OAuth2Error(error == "access_denied" ? .loginRequired : .refused, "the browser login was not approved", serverError: error)
        }
        guard let code = callback.parameters["code"], !code.isEmpty else {
            throw OAuth2Error(.invalidResponse, "the redirect carries no code")
        }
        // Before the code is exchanged (an error answer exchanges nothing, and some servers leave
        // `iss` off it).
        if endpoints.issuerInAuthorizationResponse, callback.parameters["iss"] == nil {
            throw OAuth2Error(.invalidResponse, "the redirect carries no iss, though the server's metadata says it sends one (RFC 9207)")
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
///
/// Anyone on the machine can connect to the port, so the listener trusts nothing it did not ask
/// for: connections are served side by side (at most ``maximumConnections``: when more come, the
/// oldest one still waiting for its request is closed, never the new one, so that connections held
/// open cannot keep the browser out), each bringing its request head within ``headTimeout`` and
/// its whole request within ``connectionTimeout`` and ``maximumRequestBytes``; a request to another path is
/// answered 404, and one to `/callback` without the `state` sent is answered 400; neither ends
/// the login, which waits for the real redirect until its deadline.
struct LoopbackRedirect: Sendable {
    /// `http://127.0.0.1:PORT/callback`, as sent in the authorization request.
    var redirectURI: String
    /// The redirect's query parameters.
    var parameters: [String: String]

    /// How long one connection may take to bring its request.
    static let connectionTimeout: Duration = .seconds(10)
    /// How long one connection may take to bring its request head (a browser sends it at once).
    static let headTimeout: Duration = .seconds(2)
    /// The most bytes of request body read from one connection (a redirect has none); NIO's
    /// parser bounds the head.
    static let maximumRequestBytes = 16 * 1024
    /// The most connections served at once; beyond it, the oldest one whose request has not
    /// come whole is closed to make room.
    static let maximumConnections = 32

    /// The connections being served, oldest first.
    struct Connections {
        struct Entry {
            var id: Int
            var channel: any Channel
            /// Whether its request came whole (it is only being answered).
            var complete = false
        }
        var entries: [Entry] = []
        var lastID = 0

        /// Admits `channel`: its id, and the connection closed to make room, if any (the oldest
        /// whose request has not come whole; else the oldest, which is only being answered).
        mutating func admit(_ channel: any Channel) -> (id: Int, evicted: (any Channel)?) {
            var evicted: (any Channel)?
            if entries.count >= maximumConnections, let index = entries.firstIndex(where: { !$0.complete }) ?? entries.indices.first {
                evicted = entries.remove(at: index).channel
            }
            lastID += 1
            entries.append(Entry(id: lastID, channel: channel))
            return (lastID, evicted)
        }

        mutating func complete(_ id: Int) {
            if let index = entries.firstIndex(where: { $0.id == id }) { entries[index].complete = true }
        }

        mutating func remove(_ id: Int) {
            entries.removeAll { $0.id == id }
        }
    }

    /// The connections of one login's listener that are open, and whether the login has ended:
    /// once it has, every connection is closed and any set up later is closed as it comes.
    struct Accepted {
        var open: [ObjectIdentifier: any Channel] = [:]
        var ended = false

        /// Takes `channel` in, unless the login has ended: whether it was.
        mutating func admit(_ channel: any Channel) -> Bool {
            guard !ended else { return false }
            open[ObjectIdentifier(channel)] = channel
            return true
        }

        /// Ends the login: the connections still open, to be closed.
        mutating func end() -> [any Channel] {
            ended = true
            defer { open = [:] }
            return Array(open.values)
        }
    }

    /// Listens on a free port of `127.0.0.1`, runs `ready` with the redirect URI, and returns the
    /// first request to `/callback` whose `state` is `state`, by `deadline`. When it returns or
    /// throws, the listener is closed and so is every connection to it, served or not, including
    /// one the listener accepted as it closed and that is set up only after (`settingUp`, a
    /// test's seam, runs before each connection is set up): nothing is answered after the login
    /// ended.
    static func receive(
        state: String,
        deadline: ContinuousClock.Instant,
        settingUp: (@Sendable (any Channel) -> EventLoopFuture<Void>)? = nil,
        ready: @escaping @Sendable (String) async throws -> Void
    ) async throws(OAuth2Error) -> LoopbackRedirect {
        // Connections are handed over as plain channels, not reading until they are served: one
        // accepted as the listener closes is then simply dropped (an asynchronous channel must
        // be closed by its owner).
        let server: NIOAsyncChannel<any Channel, Never>
        // Every connection still open, so that those never served (accepted as the listener
        // closed) are closed when the login ends, and those set up after it ended as they come:
        // NIO sets a connection up on its own event loop, which may run after the listener closed.
        let accepted = Locked(Accepted())
        let end = { @Sendable in
            for channel in accepted.withLock({ $0.end() }) { channel.close(promise: nil) }
        }
        defer { end() }
        do {
            server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .childChannelOption(ChannelOptions.autoRead, value: false)
                .bind(host: "127.0.0.1", port: 0) { child in
                    let before = settingUp?(child).hop(to: child.eventLoop) ?? child.eventLoop.makeSucceededVoidFuture()
                    return before.flatMapThrowing {
                        guard accepted.withLock({ $0.admit(child) }) else {
                            // The login is over: nothing is served, and the connection is closed.
                            child.close(promise: nil)
                            throw ChannelError.ioOnClosedChannel
                        }
                        let key = ObjectIdentifier(child)
                        child.closeFuture.whenComplete { _ in accepted.withLock { _ = $0.open.removeValue(forKey: key) } }
                        try child.pipeline.syncOperations.configureHTTPServerPipeline()
                        return child as any Channel
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
        // The first redirect with the right state, handed from its connection's task.
        let (found, foundContinuation) = AsyncStream.makeStream(of: [String: String].self, bufferingPolicy: .bufferingNewest(1))
        do {
            return try await withThrowingTaskGroup(of: LoopbackRedirect?.self) { group in
                group.addTask {
                    // Each connection in a task of its own, bounded: one that sends nothing, or
                    // the wrong thing, neither holds the port nor ends the login.
                    await withDiscardingTaskGroup { connections in
                        let table = Locked(Connections())
                        do {
                            try await server.executeThenClose { inbound in
                                for try await connection in inbound {
                                    // A connection handed over as the login ends is not served.
                                    if accepted.withLock({ $0.ended }) {
                                        connection.close(promise: nil)
                                        continue
                                    }
                                    // Beyond the bound (so that a flood cannot exhaust the
                                    // descriptors the real one needs), the oldest connection
                                    // still waiting for its request makes room: connections held
                                    // open lose their place to a browser, which sends its request
                                    // at once.
                                    let (id, evicted) = table.withLock { $0.admit(connection) }
                                    evicted?.close(promise: nil)
                                    connections.addTask {
                                        let parameters = await serve(connection, state: state) {
                                            table.withLock { $0.complete(id) }
                                        }
                                        if let parameters {
                                            foundContinuation.yield(parameters)
                                        }
                                        table.withLock { $0.remove(id) }
                                    }
                                }
                            }
                        } catch {
                            // The listener was closed: the login is over either way.
                        }
                        connections.cancelAll()
                    }
                    return nil
                }
                group.addTask {
                    for await parameters in found {
                        return LoopbackRedirect(redirectURI: redirectURI, parameters: parameters)
                    }
                    return nil
                }
                group.addTask {
                    do {
                        try await ready(redirectURI)
                    } catch let error as OAuth2Error {
                        end()
                        try? await server.channel.close()
                        throw error
                    } catch {
                        end()
                        try? await server.channel.close()
                        throw OAuth2Error(
                            .loginRequired, "the authorization address could not be opened: \(OAuth2AuthenticationStorage.describe(error))")
                    }
                    return nil
                }
                group.addTask {
                    try? await Task.sleep(until: deadline)
                    end()
                    try? await server.channel.close()
                    if Task.isCancelled { return nil }
                    throw OAuth2Error(.loginRequired, "the browser login was not approved in time")
                }
                defer {
                    foundContinuation.finish()
                }
                while let result = try await group.next() {
                    if let redirect = result {
                        end()
                        try? await server.channel.close()
                        group.cancelAll()
                        return redirect
                    }
                }
                throw OAuth2Error(.loginRequired, "the browser login was not approved in time")
            }
        } catch let error as OAuth2Error {
            foundContinuation.finish()
            end()
            try? await server.channel.close()
            throw error
        } catch {
            foundContinuation.finish()
            end()
            try? await server.channel.close()
            throw OAuth2Error(.loginRequired, "the browser login was cancelled")
        }
    }

    /// Serves one connection, its request head within ``headTimeout`` and the whole request
    /// within ``connectionTimeout`` (`complete` is called when it has come whole): the redirect's
    /// parameters, or `nil` when the connection brought none with the right state, timed out or
    /// failed.
    private static func serve(
        _ channel: any Channel,
        state: String,
        complete: @escaping @Sendable () -> Void
    ) async -> [String: String]? {
        let connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>
        do {
            connection = try await channel.eventLoop.submit {
                try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(wrappingChannelSynchronously: channel)
            }.get()
        } catch {
            // Closed already (made room for another), or never opened.
            try? await channel.close()
            return nil
        }
        // Reading starts now that the request has somewhere to go (a channel closed meanwhile
        // ends its inbound stream, which is then served as empty).
        try? await channel.setOption(ChannelOptions.autoRead, value: true).get()
        let headCame = Locked(false)
        return await withTaskGroup(of: [String: String]?.self) { group in
            group.addTask {
                let progress = { @Sendable (whole: Bool) in
                    if whole { complete() } else { headCame.withLock { $0 = true } }
                }
                return (try? await answer(connection, state: state, progress: progress)) ?? nil
            }
            group.addTask {
                // Whether it timed out or the answer came first, the connection is done with.
                defer { connection.channel.close(promise: nil) }
                do {
                    try await Task.sleep(for: headTimeout)
                } catch {
                    return nil
                }
                if !headCame.withLock({ $0 }) { return nil }
                try? await Task.sleep(for: connectionTimeout - headTimeout)
                return nil
            }
            var result: [String: String]?
            if let first = await group.next() { result = first }
            group.cancelAll()
            if result == nil, let second = await group.next() { result = second }
            return result
        }
    }

    /// Answers one connection's request: the query of a `GET /callback` with the expected
    /// `state`, after a page saying the window can be closed; `nil` (after a 404 or 400) for
    /// any other request, or a connection that brought none. `progress` is told when the head
    /// came (`false`) and when the whole request did (`true`).
    private static func answer(
        _ connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>,
        state: String,
        progress: @Sendable (_ whole: Bool) -> Void
    ) async throws -> [String: String]? {
        try await connection.executeThenClose { inbound, outbound in
            var head: HTTPRequestHead?
            var bodyBytes = 0
            for try await part in inbound {
                switch part {
                case .head(let requestHead):
                    head = requestHead
                    progress(false)
                case .body(let buffer):
                    bodyBytes += buffer.readableBytes
                    guard bodyBytes <= maximumRequestBytes else { return nil }
                case .end:
                    guard let request = head else { continue }
                    progress(true)
                    let components = URLComponents(string: request.uri)
                    var parameters: [String: String] = [:]
                    for item in components?.queryItems ?? [] where parameters[item.name] == nil {
                        parameters[item.name] = item.value ?? ""
                    }
                    let isCallback = components?.path == "/callback" && request.method == .GET
                    let isExpected = isCallback && parameters["state"] == state
                    let (status, text): (HTTPResponseStatus, String) =
                        isExpected
                        ? (.ok, "You can close this window and go back to the terminal.\n")
                        : isCallback ? (.badRequest, "This is not the login this program is waiting for.\n") : (.notFound, "Not found\n")
                    var headers = HTTPHeaders([
                        ("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", "\(text.utf8.count)"), ("Connection", "close"),
                    ])
                    headers.add(name: "Cache-Control", value: "no-store")
                    // The page is a courtesy: the redirect counts even when the browser has gone.
                    try? await outbound.write(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers)))
                    try? await outbound.write(.body(.byteBuffer(ByteBuffer(string: text))))
                    try? await outbound.write(.end(nil))
                    return isExpected ? parameters : nil
                }
            }
            return nil
        }
    }
}
