public import Foundation
public import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOPosix
public import Resourceful
import Synchronization

/// A real HTTP/1.1 server on the loopback interface, for tests of code that calls an API.
///
/// It listens on `127.0.0.1` at a port the system picks, answers from scripted responses, records
/// every request, and can misbehave on purpose (delays, dropped connections, any status).
///
/// ```swift
/// try await MockServer.withRunning { server in
///     server.stub(.get, "/users/42", try .json(User(id: 42, name: "Ada")))
///     var deps = APIDependencies(apiConfig: APIConfig(baseURL: server.baseURL, service: "test"),
///                                transport: AsyncHTTPClientTransport())
///     ...
///     #expect(server.requests.first?.headerFields[.authorization] == "Bearer t")
/// }
/// ```
///
/// Routes are matched on method and path; a segment written `:name` matches any one segment and
/// its value is in ``RecordedRequest/pathParameters``. The route added last wins. A request no route
/// matches gets `404` with a JSON body naming the method and path.
public final class MockServer: Sendable {
    /// Answers a request.
    typealias Handler = @Sendable (RecordedRequest) async throws -> MockResponse

    private struct Route: Sendable {
        var method: HTTPRequest.Method
        var segments: [Substring]
        var handler: Handler
    }

    private struct State: Sendable {
        var routes: [Route] = []
        var requests: [RecordedRequest] = []
    }

    /// The connections accepted and not yet closed, so that those never served (accepted as the
    /// server shuts down) are closed by ``shutdown()``; after it, a late connection is closed at
    /// once.
    private struct Children: Sendable {
        var open: [ObjectIdentifier: any Channel] = [:]
        var isShutDown = false
    }

    /// The port the server listens on.
    public let port: Int
    private let state = Locked(State())
    private let acceptedConnections = Atomic<Int>(0)
    private let bodyBytes = Atomic<Int>(0)
    private let channel: NIOAsyncChannel<any Channel, Never>
    private let children: Locked<Children>
    private let serving: Locked<Task<Void, Never>?> = Locked(nil)

    private init(channel: NIOAsyncChannel<any Channel, Never>, children: Locked<Children>, port: Int) {
        self.channel = channel
        self.children = children
        self.port = port
    }

    /// Starts a server on `127.0.0.1` at a free port. Call ``shutdown()`` when done, or use
    /// ``withRunning(_:)``.
    public static func start() async throws -> MockServer {
        // Connections are handed over as plain channels that read nothing until they are served,
        // and are wrapped then: one accepted while the server shuts down (its inbound sequence no
        // longer consumed) is dropped harmlessly and closed by `shutdown()`, where an asynchronous
        // channel dropped before it became active would trap in NIO.
        let children = Locked(Children())
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.autoRead, value: false)
            .bind(host: "127.0.0.1", port: 0) { child in
                child.eventLoop.makeCompletedFuture {
                    try child.pipeline.syncOperations.configureHTTPServerPipeline()
                    let key = ObjectIdentifier(child)
                    let admitted = children.withLock { children in
                        if children.isShutDown { return false }
                        children.open[key] = child
                        return true
                    }
                    if admitted {
                        child.closeFuture.whenComplete { _ in _ = children.withLock { $0.open.removeValue(forKey: key) } }
                    } else {
                        child.close(promise: nil)
                    }
                    return child as any Channel
                }
            }
        guard let port = channel.channel.localAddress?.port else {
            try? await channel.channel.close()
            throw MockServerError.noPort
        }
        let server = MockServer(channel: channel, children: children, port: port)
        let task = Task { await server.serve() }
        server.serving.withLock { $0 = task }
        return server
    }

    /// Starts a server, runs `body` with it, and shuts it down however `body` ends.
    public static func withRunning<T>(_ body: (MockServer) async throws -> T) async throws -> T {
        let server = try await start()
        do {
            let result = try await body(server)
            try await server.shutdown()
            return result
        } catch {
            try? await server.shutdown()
            throw error
        }
    }

    /// Starts a server and a live transport, runs `body` with them, and shuts both down however
    /// `body` ends: the usual frame of a test that calls a server.
    ///
    /// ```swift
    /// try await MockServer.withTransport { server, transport in
    ///     server.stub(.get, "/users/42", try .json(User(id: 42, name: "Ada")))
    ///     let api = API(dependencies: APIDependencies(apiConfig: APIConfig(baseURL: server.baseURL, service: "s"), transport: transport))
    ///     _ = try await api.call(ShowUser(id: 42))
    /// }
    /// ```
    public static func withTransport<T>(
        settings: APIConfig.HTTPSettings = APIConfig.HTTPSettings(),
        _ body: (MockServer, AsyncHTTPClientTransport) async throws -> T
    ) async throws -> T {
        try await withRunning { server in
            try await AsyncHTTPClientTransport.withTransport(settings: settings) { transport in
                try await body(server, transport)
            }
        }
    }

    /// `http://127.0.0.1:<port>`.
    public var baseURL: URL {
        var components = URLComponents()
        components.scheme = "http"
        components.host = "127.0.0.1"
        components.port = port
        return components.url ?? URL(fileURLWithPath: "/", isDirectory: true)
    }

    /// Every request received so far, in order of arrival.
    public var requests: [RecordedRequest] {
        state.withLock { $0.requests }
    }

    /// How many connections the server has accepted so far.
    package var connectionCount: Int {
        acceptedConnections.load(ordering: .relaxed)
    }

    /// How many bytes of ``MockResponse/parts`` the server has written so far: a write waits
    /// while the connection cannot take more, so this stays near what the client has read.
    package var bodyBytesSent: Int {
        bodyBytes.load(ordering: .relaxed)
    }

    /// Answers `method` `path` with `responses` in turn; the last one repeats.
    public func stub(_ method: HTTPRequest.Method, _ path: String, _ responses: MockResponse...) {
        let queue = Locked(responses)
        route(method, path) { _ in
            queue.withLock { queue in
                guard let first = queue.first else { return MockResponse.status(.notFound) }
                if queue.count > 1 { queue.removeFirst() }
                return first
            }
        }
    }

    /// Answers `method` `path` with whatever `handler` returns.
    public func route(_ method: HTTPRequest.Method, _ path: String, _ handler: @escaping @Sendable (RecordedRequest) async throws -> MockResponse) {
        let route = Route(method: method, segments: Self.segments(path), handler: handler)
        state.withLock { $0.routes.append(route) }
    }

    /// Forgets every route and recorded request.
    package func reset() {
        state.withLock { $0 = State() }
    }

    /// Stops accepting connections and closes the open ones.
    public func shutdown() async throws {
        let task = serving.withLock { task in
            defer { task = nil }
            return task
        }
        task?.cancel()
        try? await channel.channel.close()
        await task?.value
        // Connections accepted but never served (or still open) are closed; later ones at once.
        let open = children.withLock { children in
            children.isShutDown = true
            defer { children.open = [:] }
            return Array(children.open.values)
        }
        for child in open { child.close(promise: nil) }
    }

    private func serve() async {
        do {
            try await channel.executeThenClose { inbound in
                try await withThrowingDiscardingTaskGroup { group in
                    for try await connection in inbound {
                        acceptedConnections.add(1, ordering: .relaxed)
                        group.addTask { await self.handle(connection) }
                    }
                }
            }
        } catch {
            // The listening channel closed or the server was cancelled: nothing more to serve.
        }
    }

    private func handle(_ child: any Channel) async {
        let connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>
        do {
            connection = try await child.eventLoop.submit {
                try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(wrappingChannelSynchronously: child)
            }.get()
        } catch {
            // Closed already, or never opened.
            try? await child.close()
            return
        }
        // Reading starts now that the requests have somewhere to go (a connection closed
        // meanwhile ends its inbound sequence, which is then served as empty).
        try? await child.setOption(ChannelOptions.autoRead, value: true).get()
        try? await connection.executeThenClose { inbound, outbound in
            var head: HTTPRequestHead?
            var body = ByteBuffer()
            for try await part in inbound {
                switch part {
                case .head(let requestHead):
                    head = requestHead
                    body.clear()
                case .body(var chunk):
                    body.writeBuffer(&chunk)
                case .end:
                    guard let requestHead = head else { continue }
                    let keepOpen = try await respond(to: requestHead, body: body, outbound: outbound)
                    if !keepOpen || !requestHead.isKeepAlive { return }
                }
            }
        }
    }

    /// Answers one request; returns whether the connection may serve another.
    private func respond(
        to head: HTTPRequestHead,
        body: ByteBuffer,
        outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>
    ) async throws -> Bool {
        let (path, query) = Self.split(head.uri)
        var fields = HTTPFields()
        for (name, value) in head.headers {
            if let fieldName = HTTPField.Name(name) { fields.append(HTTPField(name: fieldName, value: value)) }
        }
        var request = RecordedRequest(
            method: HTTPRequest.Method(head.method.rawValue) ?? .get,
            path: path,
            query: query,
            headerFields: fields,
            body: Data(body.readableBytesView)
        )
        let match = state.withLock { state in
            state.routes.reversed().lazy.compactMap { route in
                route.method == request.method ? Self.match(route.segments, path).map { (route.handler, $0) } : nil
            }.first
        }
        request.pathParameters = match?.1 ?? [:]
        state.withLock { $0.requests.append(request) }

        let response: MockResponse
        if let handler = match?.0 {
            do {
                response = try await handler(request)
            } catch {
                response = .json(raw: #"{"error":"handler failed"}"#, status: .internalServerError)
            }
        } else {
            response = .json(raw: #"{"error":"no route for \#(request.method.rawValue) \#(path)"}"#, status: .notFound)
        }
        return try await send(response, outbound: outbound)
    }

    private func send(_ response: MockResponse, outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>) async throws -> Bool {
        if let delay = response.delay { try await Task.sleep(for: delay) }
        if response.fault == .closeConnection { return false }
        var headers = HTTPHeaders()
        for field in response.headerFields { headers.add(name: field.name.rawName, value: field.value) }
        if response.parts == nil { headers.replaceOrAdd(name: "content-length", value: String(response.body.count)) }
        let status = HTTPResponseStatus(statusCode: response.status.code, reasonPhrase: response.status.reasonPhrase)
        try await outbound.write(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers)))
        if response.fault == .closeAfterHead { return false }
        if let delay = response.bodyDelay { try await Task.sleep(for: delay) }
        if let parts = response.parts {
            var sent = 0
            for part in parts {
                if let delay = response.partDelay { try await Task.sleep(for: delay) }
                var part = part
                if case .closeMidBody(let bytes) = response.fault {
                    guard sent < bytes else { return false }
                    part = part.prefix(bytes - sent)
                }
                try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: part))))
                sent += part.count
                bodyBytes.add(part.count, ordering: .relaxed)
            }
            if case .closeMidBody = response.fault { return false }
            try await outbound.write(.end(nil))
            return true
        }
        if case .closeMidBody(let bytes) = response.fault {
            try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: response.body.prefix(bytes)))))
            return false
        }
        if !response.body.isEmpty { try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: response.body)))) }
        try await outbound.write(.end(nil))
        return true
    }

    private static func split(_ uri: String) -> (path: String, query: String) {
        guard let mark = uri.firstIndex(of: "?") else { return (uri, "") }
        return (String(uri[..<mark]), String(uri[uri.index(after: mark)...]))
    }

    private static func segments(_ path: String) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: false).dropFirst(path.hasPrefix("/") ? 1 : 0).map { $0 }
    }

    private static func match(_ pattern: [Substring], _ path: String) -> [String: String]? {
        let actual = segments(path)
        guard actual.count == pattern.count else { return nil }
        var parameters: [String: String] = [:]
        for (expected, segment) in zip(pattern, actual) {
            if expected.hasPrefix(":") {
                parameters[String(expected.dropFirst())] = String(segment).removingPercentEncoding ?? String(segment)
            } else if expected != segment {
                return nil
            }
        }
        return parameters
    }
}

/// Why a ``MockServer`` could not start.
package enum MockServerError: Error, Sendable {
    /// The listening socket has no port.
    case noPort
}
