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

    /// The response body's buffers, with what reading them throws reported as a `TransportError`.
    struct Body: AsyncSequence, Sendable {
        let base: HTTPClientResponse.Body
        struct AsyncIterator: AsyncIteratorProtocol {
            var base: HTTPClientResponse.Body.AsyncIterator
            mutating func next() async throws -> ByteBuffer? {
                do {
                    return try await base.next()
                } catch is CancellationError {
                    throw TransportError.cancelled
                } catch {
                    throw TransportError.connectionFailed(error)
                }
            }
        }
        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator()) }
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let remaining = ContinuousClock.now.duration(to: request.deadline)
        guard remaining > .zero else { throw TransportError.timeout }
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = HTTPMethod(rawValue: request.method.rawValue)
        for field in request.headerFields { outgoing.headers.add(name: field.name.rawName, value: field.value) }
        if let body = request.body {
            outgoing.body = body.bytes.map { .bytes($0) } ?? .stream(body, length: body.length.map { .known(Int64($0)) } ?? .unknown)
        }
        let (seconds, attoseconds) = remaining.components
        let deadline = NIODeadline.now() + .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        do {
            let response = try await client.execute(outgoing, deadline: deadline)
            var fields = HTTPFields()
            for (name, value) in response.headers {
                if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
            }
            let length = response.headers.first(name: "content-length").flatMap(Int.init)
            return TransportResponse(
                status: .init(code: Int(response.status.code)),
                headerFields: fields,
                body: TransportBody(stream: Body(base: response.body), length: length)
            )
        } catch let error as HTTPClientError where error == .deadlineExceeded {
            throw TransportError.timeout
        } catch let error as HTTPClientError where error == .cancelled {
            throw TransportError.cancelled
        } catch is CancellationError {
            throw TransportError.cancelled
        } catch {
            throw TransportError.connectionFailed(error)
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

    /// Runs `body` with a transport, shutting it down whatever `body` does.
    private func withTransport(_ body: (StreamingAppTransport) async throws -> Void) async throws {
        let transport = StreamingAppTransport()
        do {
            try await body(transport)
        } catch {
            try? await transport.shutdown()
            throw error
        }
        try await transport.shutdown()
    }

    @Test func itConforms() async throws {
        try await withTransport { transport in
            try await HTTPTransportConformance(transport: transport).run()
        }
    }

    @Test func aStreamedAnswerIsCollectedDecodedAndBoundedByTheAPI() async throws {
        try await withTransport { transport in try await streamedCalls(transport) }
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
