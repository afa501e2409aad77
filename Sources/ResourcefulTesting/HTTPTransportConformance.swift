import Foundation
public import Resourceful
import HTTPTypes
import NIOCore

/// Checks that an ``HTTPTransport`` behaves as ``API`` expects, against a ``MockServer`` it starts;
/// run it in your own tests against your own transport.
///
/// ```swift
/// @Test func myTransportConforms() async throws {
///     let transport = MyTransport()
///     try await HTTPTransportConformance(transport: transport).run()
///     try await transport.shutdown()
/// }
/// ```
///
/// It checks that the transport sends methods, header fields and bodies as given and returns any
/// status (`3xx` included: redirects are `RedirectMiddleware`'s to follow); and that a deadline, a body over
/// the limit, a cancellation and a refused connection end in a ``TransportError`` of the kind the
/// ``API`` reports (a transport throws nothing else). For streams: that it sends a body from an
/// async sequence; that a body asked for as a stream (``TransportRequest/streamsResponseBody``)
/// holds the server back while it is not read (it is not buffered without bound); that a body
/// left half-read closes its connection; that a server silent for longer than
/// ``TransportRequest/idleTimeout`` between parts, and a stream past its deadline, end as
/// `timeout`; and that a body shorter than its `Content-Length` fails. A failure names the check.
public struct HTTPTransportConformance<Transport: HTTPTransport>: Sendable {
    /// A check that did not hold.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// The check's name.
        package var check: String
        /// What was wrong.
        package var detail: String
        /// `check: detail`.
        public var description: String { "\(check): \(detail)" }
    }

    private let transport: Transport

    /// Creates the suite for `transport`.
    public init(transport: Transport) {
        self.transport = transport
    }

    /// Runs every check; throws ``Failure`` at the first that does not hold.
    public func run() async throws {
        try await MockServer.withRunning { server in
            try await sendsMethodsHeadersAndBodies(server)
            try await returnsEveryStatusAndRedirectsAsTheyAre(server)
            try await endsAtTheDeadline(server)
            try await stopsReadingPastTheLimit(server)
            try await honoursCancellation(server)
            try await sendsAStreamedBody(server)
            try await streamsWithBackPressure(server)
            try await closesAConnectionLeftHalfRead(server)
            try await endsASilentStream(server)
            try await endsAStreamAtTheDeadline(server)
            try await failsABodyThatEndsEarly(server)
        }
        try await reportsARefusedConnection()
    }

    private func expect(_ condition: Bool, _ check: String, _ detail: @autoclosure () -> String) throws {
        if !condition { throw Failure(check: check, detail: detail()) }
    }

    private func request(
        _ server: MockServer,
        _ method: HTTPRequest.Method,
        _ path: String,
        fields: HTTPFields = [:],
        body: ByteBuffer? = nil,
        within: Duration = .seconds(60),
        maxResponseBytes: Int = 1 << 20
    ) -> TransportRequest {
        TransportRequest(
            method: method,
            url: server.baseURL.absoluteString + path,
            headerFields: fields,
            body: body,
            deadline: .now + within,
            maxResponseBytes: maxResponseBytes
        )
    }

    /// The kind the ``API`` reports for what `body` threw, or `nil` when it threw nothing; a
    /// failure of `check` when it threw anything but a ``TransportError``.
    private func failureKind(_ check: String, _ body: () async throws -> Void) async throws -> APIError.Kind? {
        do {
            try await body()
            return nil
        } catch let error as TransportError {
            return APIError.classifying(error, deadline: .now + .seconds(3600)).kind
        } catch {
            throw Failure(check: check, detail: "threw \(type(of: error)), not a TransportError")
        }
    }

    private func sendsMethodsHeadersAndBodies(_ server: MockServer) async throws {
        let check = "sendsMethodsHeadersAndBodies"
        let token = HTTPField.Name("X-Conformance")!
        for method in [HTTPRequest.Method.get, .post, .put, .patch, .delete] {
            server.route(method, "/echo") { recorded in
                var response = MockResponse(status: .ok, body: recorded.body)
                response.headerFields[.contentType] = "application/octet-stream"
                response.headerFields[token] = recorded.headerFields[token]
                response.headerFields[HTTPField.Name("X-Method")!] = recorded.method.rawValue
                return response
            }
            let body: ByteBuffer? = method == .get || method == .delete ? nil : ByteBuffer(bytes: [0, 1, 2, 0xFF, 0x0A])
            let response = try await transport.send(request(server, method, "/echo?q=a%20b", fields: [token: "value \(method.rawValue)"], body: body))
            try expect(response.status == .ok, check, "\(method.rawValue) answered \(response.status.code)")
            try expect(response.headerFields[HTTPField.Name("X-Method")!] == method.rawValue, check, "the method arrived as another")
            try expect(response.headerFields[token] == "value \(method.rawValue)", check, "a header field did not arrive or come back")
            try expect(try await response.body.collect(upTo: 1 << 20) == (body ?? ByteBuffer()), check, "the \(method.rawValue) body did not arrive or come back byte for byte")
        }
        try expect(server.requests.last?.query == "q=a%20b", check, "the query did not arrive as given")
    }

    private func returnsEveryStatusAndRedirectsAsTheyAre(_ server: MockServer) async throws {
        let check = "returnsEveryStatusAndRedirectsAsTheyAre"
        server.stub(.get, "/moved", MockResponse(status: .found, headerFields: [.location: "/elsewhere"]))
        server.stub(.get, "/broken", .json(raw: #"{"error":"x"}"#, status: .internalServerError))
        server.stub(.get, "/elsewhere", .status(.noContent))
        let moved = try await transport.send(request(server, .get, "/moved"))
        try expect(moved.status == .found, check, "a 302 came back as \(moved.status.code): the transport followed it")
        try expect(moved.headerFields[.location] == "/elsewhere", check, "the Location field was lost")
        let broken = try await transport.send(request(server, .get, "/broken"))
        try expect(broken.status == .internalServerError, check, "a 500 came back as \(broken.status.code)")
        try expect(try await broken.body.collect(upTo: 1 << 20).readableBytes == 13, check, "the error body was lost")
    }

    private func endsAtTheDeadline(_ server: MockServer) async throws {
        let check = "endsAtTheDeadline"
        server.stub(.get, "/slow", MockResponse.status(.noContent).delayed(by: .seconds(120)))
        let start = ContinuousClock.now
        let kind = try await failureKind(check) { _ = try await transport.send(request(server, .get, "/slow", within: .milliseconds(300))) }
        try expect(kind == .timeout, check, "a late answer ended as \(kind.map { "\($0)" } ?? "a response"), not timeout")
        // Far from the server's two minutes, however loaded the machine.
        try expect(ContinuousClock.now - start < .seconds(60), check, "the call went on long past its deadline")
        let past = TransportRequest(method: .get, url: server.baseURL.absoluteString + "/slow", deadline: .now - .seconds(1), maxResponseBytes: 10)
        let pastKind = try await failureKind(check) { _ = try await transport.send(past) }
        try expect(pastKind == .timeout, check, "a deadline already past ended as \(pastKind.map { "\($0)" } ?? "a response")")
    }

    private func stopsReadingPastTheLimit(_ server: MockServer) async throws {
        let check = "stopsReadingPastTheLimit"
        server.stub(.get, "/large", MockResponse(status: .ok, body: Data(repeating: 0x61, count: 64 * 1024)))
        // A transport that streams the body may report it while the body is read.
        let kind = try await failureKind(check) {
            _ = try await transport.send(request(server, .get, "/large", maxResponseBytes: 1024)).body.collect(upTo: 1024)
        }
        try expect(kind == .responseTooLarge, check, "a 64 KiB body over a 1 KiB limit ended as \(kind.map { "\($0)" } ?? "a response")")
        let fits = try await transport.send(request(server, .get, "/large", maxResponseBytes: 64 * 1024))
        try expect(try await fits.body.collect(upTo: 64 * 1024).readableBytes == 64 * 1024, check, "a body of exactly the limit was not returned whole")
    }

    private func honoursCancellation(_ server: MockServer) async throws {
        let check = "honoursCancellation"
        server.stub(.get, "/hang", MockResponse.status(.noContent).delayed(by: .seconds(600)))
        let transport = transport
        let pending = request(server, .get, "/hang", within: .seconds(600))
        let task = Task { try await transport.send(pending) }
        // Poll until the request reached the server, then cancel the caller.
        let arrived = ContinuousClock.now + .seconds(60)
        while !server.requests.contains(where: { $0.path == "/hang" }), ContinuousClock.now < arrived {
            try await Task.sleep(for: .milliseconds(5))
        }
        let start = ContinuousClock.now
        task.cancel()
        let kind = try await failureKind(check) { _ = try await task.value }
        try expect(kind == .cancelled, check, "a cancelled call ended as \(kind.map { "\($0)" } ?? "a response")")
        try expect(ContinuousClock.now - start < .seconds(60), check, "the call went on after its task was cancelled")
    }

    private func streamRequest(_ server: MockServer, _ path: String, within: Duration = .seconds(120), idle: Duration? = nil) -> TransportRequest {
        var request = request(server, .get, path, within: within)
        request.streamsResponseBody = true
        request.idleTimeout = idle
        return request
    }

    private static func parts(_ count: Int, of size: Int) -> [Data] {
        Array(repeating: Data(repeating: 0x62, count: size), count: count)
    }

    private func sendsAStreamedBody(_ server: MockServer) async throws {
        let check = "sendsAStreamedBody"
        server.route(.put, "/upload") { recorded in MockResponse(status: .ok, body: recorded.body) }
        let chunks = (0..<50).map { ByteBuffer(repeating: UInt8($0), count: 1000) }
        var expected = ByteBuffer()
        for var chunk in chunks { expected.writeBuffer(&chunk) }
        for length in [50_000, nil] as [Int?] {
            var put = request(server, .put, "/upload")
            put.body = TransportBody(stream: ReplayedParts(parts: chunks), length: length)
            let response = try await transport.send(put)
            let echoed = try await response.body.collect(upTo: 1 << 20)
            try expect(echoed == expected, check, "a streamed body \(length == nil ? "without" : "with") a length did not arrive byte for byte")
        }
    }

    private func streamsWithBackPressure(_ server: MockServer) async throws {
        let check = "streamsWithBackPressure"
        // 1 GiB, far more than the socket buffers of the two ends can hold: without back-pressure
        // it is all sent within seconds.
        var response = MockResponse(headerFields: [.contentLength: String(16384 * 64 * 1024)])
        response.parts = Self.parts(16384, of: 64 * 1024)
        server.stub(.get, "/huge", response)
        let before = server.bodyBytesSent
        let streamed = try await transport.send(streamRequest(server, "/huge"))
        var reader = streamed.body.makeAsyncIterator()
        _ = try await reader.next()
        var sent = -1
        let giveUp = ContinuousClock.now + .seconds(20)
        while server.bodyBytesSent != sent, ContinuousClock.now < giveUp {
            sent = server.bodyBytesSent
            try await Task.sleep(for: .milliseconds(300))
        }
        try expect(sent - before < 512 * 1024 * 1024, check, "a reader that stopped after one part let the server send \(sent - before) bytes")
    }

    private func closesAConnectionLeftHalfRead(_ server: MockServer) async throws {
        let check = "closesAConnectionLeftHalfRead"
        var response = MockResponse(headerFields: [.contentLength: String(64 * 64 * 1024)])
        response.parts = Self.parts(64, of: 64 * 1024)
        response.partDelay = .milliseconds(5)
        server.stub(.get, "/half", response)
        server.stub(.get, "/after", .status(.noContent))
        do {
            let streamed = try await transport.send(streamRequest(server, "/half"))
            for try await _ in streamed.body { break }
        }
        let before = server.connectionCount
        _ = try await transport.send(request(server, .get, "/after"))
        try expect(server.connectionCount == before + 1, check, "the next request went out on the connection of a body left half-read")
    }

    private func endsASilentStream(_ server: MockServer) async throws {
        let check = "endsASilentStream"
        var response = MockResponse()
        response.parts = [Data("first".utf8), Data("late".utf8)]
        response.partDelay = .seconds(600)
        server.stub(.get, "/silent", response)
        let start = ContinuousClock.now
        let kind = try await failureKind(check) {
            let streamed = try await transport.send(streamRequest(server, "/silent", idle: .milliseconds(300)))
            _ = try await streamed.body.collect(upTo: 1 << 20)
        }
        try expect(kind == .timeout, check, "a server silent past the idle time-out ended as \(kind.map { "\($0)" } ?? "a response"), not timeout")
        try expect(ContinuousClock.now - start < .seconds(60), check, "the stream went on long past its idle time-out")
    }

    private func endsAStreamAtTheDeadline(_ server: MockServer) async throws {
        let check = "endsAStreamAtTheDeadline"
        var response = MockResponse()
        response.parts = Self.parts(3000, of: 1)
        response.partDelay = .milliseconds(100)
        server.stub(.get, "/trickle", response)
        let start = ContinuousClock.now
        let kind = try await failureKind(check) {
            let streamed = try await transport.send(streamRequest(server, "/trickle", within: .milliseconds(800), idle: .seconds(10)))
            _ = try await streamed.body.collect(upTo: 1 << 20)
        }
        try expect(kind == .timeout, check, "a stream past its deadline ended as \(kind.map { "\($0)" } ?? "a response"), not timeout")
        try expect(ContinuousClock.now - start < .seconds(60), check, "the stream went on long past its deadline")
    }

    private func failsABodyThatEndsEarly(_ server: MockServer) async throws {
        let check = "failsABodyThatEndsEarly"
        var response = MockResponse(headerFields: [.contentLength: "4096"], fault: .closeMidBody(bytes: 1000))
        response.parts = Self.parts(4, of: 1024)
        server.stub(.get, "/short", response)
        for streams in [true, false] {
            let kind = try await failureKind(check) {
                var short = request(server, .get, "/short")
                short.streamsResponseBody = streams
                _ = try await transport.send(short).body.collect(upTo: 1 << 20)
            }
            try expect(kind == .transport, check, "a body that ended at 1000 of its 4096 bytes ended as \(kind.map { "\($0)" } ?? "a response")")
        }
    }

    private func reportsARefusedConnection() async throws {
        let check = "reportsARefusedConnection"
        let closed = try await MockServer.start()
        let url = closed.baseURL.absoluteString
        try await closed.shutdown()
        let refused = TransportRequest(method: .get, url: url + "/x", deadline: .now + .seconds(10), maxResponseBytes: 10)
        let kind = try await failureKind(check) { _ = try await transport.send(refused) }
        try expect(kind == .transport, check, "a refused connection ended as \(kind.map { "\($0)" } ?? "a response"), not transport")
    }
}
