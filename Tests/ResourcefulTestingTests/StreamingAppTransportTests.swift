import AsyncHTTPClient
import Foundation
import HTTPTypes
import InMemoryLogging
import Logging
import NIOCore
import NIOHTTP1
import Resourceful
import ResourcefulTesting
import Testing

/// A transport that hands the response body on as AsyncHTTPClient streams it, and sends a
/// streamed request body as a stream: the contract carries both, and the API collects a streamed
/// answer with the same checks as a collected one.
struct StreamingAppTransport: HTTPTransport {
    let client: HTTPClient

    init() {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.connectionPool.retryConnectionEstablishment = false
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        guard let deadline = request.nioDeadline else { throw TransportError.timeout }
        do {
            let response = try await client.execute(HTTPClientRequest(request), deadline: deadline)
            let head = response.transportHead
            let length = response.headers.first(name: "content-length").flatMap(Int.init)
            let body = TransportBody(stream: IdleBoundedBody(body: response.body, idle: request.idleTimeout, deadline: request.deadline), length: length)
            return TransportResponse(status: head.status, headerFields: head.fields, body: body)
        } catch {
            throw transportError(error)
        }
    }

    func shutdown() async throws {
        try await client.shutdown()
    }
}

@Suite struct StreamingAppTransportTests {
    struct User: Codable, Equatable, Sendable { var id: Int; var name: String }

    /// Sends the request body as a stream of small chunks.
    struct StreamTheBody: APIMiddleware {
        func intercept(
            _ request: TransportRequest, context: CallContext,
            next: (TransportRequest, CallContext) async throws -> TransportResponse
        ) async throws -> TransportResponse {
            guard let bytes = request.body?.bytes else { return try await next(request, context) }
            var request = request
            let chunks = stride(from: 0, to: bytes.readableBytes, by: 3).map { bytes.getSlice(at: bytes.readerIndex + $0, length: min(3, bytes.readableBytes - $0))! }
            request.body = TransportBody(stream: chunks.async, length: bytes.readableBytes)
            return try await next(request, context)
        }
    }

    @Test func itConforms() async throws {
        try await withShutdown(StreamingAppTransport()) { transport in
            try await HTTPTransportConformance(transport: transport).run()
        }
    }

    @Test func aStreamedAnswerIsCollectedDecodedAndBoundedByTheAPI() async throws {
        try await withShutdown(StreamingAppTransport()) { transport in try await streamedCalls(transport) }
    }

    private func streamedCalls(_ transport: StreamingAppTransport) async throws {
        let logs = InMemoryLogHandler()
        var logger = Logger(label: "test", factory: { _ in logs })
        logger.logLevel = .debug
        try await MockServer.withRunning { server in
            let users = (1...500).map { User(id: $0, name: "user \($0)") }
            server.stub(.get, "/v1/users", try .json(users), try .json(users))
            server.route(.post, "/v1/users") { recorded in .json(raw: recorded.body, status: .created) }
            var config = APIConfig(baseURL: server.baseURL.appendingPathComponent("v1"), service: "s")
            config.logging.level = .debug
            let api = API(dependencies: APIDependencies(apiConfig: config, transport: transport, logger: logger), middlewares: API.defaultMiddlewares + [StreamTheBody()])
            #expect(try await api.call(AdHocRequest<[User], Empty>(.index, "users")) == users)
            #expect(logs.entries.contains { $0.metadata["resourceful.response.body"]?.description.hasPrefix("<streamed") == true })

            var small = AdHocRequest<[User], Empty>(.index, "users")
            small.configureOptions = { $0.maxResponseBytes = 1024 }
            let error = await #expect(throws: APIError.self) { try await api.call(small) }
            #expect(error?.kind == .responseTooLarge)

            let created = try await api.call(AdHocRequest<User, User>(.create, "users", parameters: User(id: 9, name: "streamed body")))
            #expect(created == User(id: 9, name: "streamed body"))
            // Sent as a stream of a known length: with `Content-Length`, not chunked.
            let arrived = try #require(server.requests.last)
            #expect(arrived.headerFields[.contentLength] == String(arrived.body.count))
            #expect(arrived.headerFields[.transferEncoding] == nil)
        }
    }
}

extension Array where Element: Sendable {
    /// The elements as an async sequence.
    fileprivate var async: AsyncStream<Element> {
        AsyncStream { continuation in
            for element in self { continuation.yield(element) }
            continuation.finish()
        }
    }
}
