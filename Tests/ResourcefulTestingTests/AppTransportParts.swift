import AsyncHTTPClient
import HTTPTypes
import NIOCore
import NIOHTTP1
import Resourceful

/// What the transports written over AsyncHTTPClient's async API in these tests share: the
/// request as that API takes it, the answer's fields, and its errors as `TransportError`s.
extension HTTPClientRequest {
    /// `request`, its body sent as bytes or streamed as it is given.
    init(_ request: TransportRequest) {
        self.init(url: request.url)
        method = HTTPMethod(rawValue: request.method.rawValue)
        for field in request.headerFields { headers.add(name: field.name.rawName, value: field.value) }
        if let body = request.body {
            self.body = body.bytes.map { .bytes($0) } ?? .stream(body, length: body.length.map { .known(Int64($0)) } ?? .unknown)
        }
    }
}

extension HTTPClientResponse {
    /// The status and header fields as a `TransportResponse` holds them.
    var transportHead: (status: HTTPResponse.Status, fields: HTTPFields) {
        var fields = HTTPFields()
        for (name, value) in headers {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        return (.init(code: Int(status.code)), fields)
    }
}

extension TransportRequest {
    /// The deadline as AsyncHTTPClient takes it; `nil` once it has passed.
    var nioDeadline: NIODeadline? {
        let remaining = ContinuousClock.now.duration(to: deadline)
        guard remaining > .zero else { return nil }
        let (seconds, attoseconds) = remaining.components
        return NIODeadline.now() + .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

/// What AsyncHTTPClient threw, as a transport reports it.
func transportError(_ error: any Error) -> TransportError {
    switch error {
    case let error as TransportError: error
    case is NIOTooManyBytesError: .responseTooLarge
    case let error as HTTPClientError where error == .deadlineExceeded: .timeout
    case let error as HTTPClientError where error == .cancelled: .cancelled
    case is CancellationError: .cancelled
    default: .connectionFailed(error)
    }
}

/// Runs `body` with `transport`, shutting it down however `body` ends.
func withShutdown<Transport: HTTPTransport, T>(_ transport: Transport, _ body: (Transport) async throws -> T) async throws -> T {
    do {
        let result = try await body(transport)
        try await transport.shutdown()
        return result
    } catch {
        try? await transport.shutdown()
        throw error
    }
}
