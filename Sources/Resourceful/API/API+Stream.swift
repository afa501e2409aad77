public import HTTPTypes
public import NIOCore

extension API {
    /// Calls `request` and returns its response once the head is in, the body still arriving:
    /// read it at your pace (the transport reads the network no faster), in bounded memory
    /// whatever its size.
    ///
    /// The call runs through the middlewares as any other: credential, redaction, retries (before
    /// the head only: nothing of the body has reached you then), logs (the body's size, never its
    /// bytes), metrics and spans covering the whole stream. ``RequestOptions/timeout`` bounds the
    /// wait for the head and each silence of the server between parts; nothing bounds the whole
    /// stream unless ``RequestOptions/streamTimeout`` does. A status outside 200–299 throws as
    /// ``call(_:)`` does, its body collected.
    ///
    /// ```swift
    /// let export = try await api.stream(ExportAuditLog(since: yesterday))
    /// for try await chunk in export.body { try sink.write(chunk) }
    /// ```
    ///
    /// Stop reading (break, or cancel the task) and the connection is closed, not pooled.
    ///
    /// - Throws: ``APIError``; reading the body throws ``APIError`` too, such as
    ///   ``APIError/Kind/transport`` for a body that ended before its `Content-Length`.
    public func stream<Request: ResourceRequest>(_ request: Request) async throws(APIError) -> StreamedResponse {
        try await openStream(request)
    }

    /// Opens `request` as a stream, with `extraFields` set on the request (`Range`,
    /// `Last-Event-ID`), ending at `deadline` when given (a download's or event stream's own, over
    /// all its connections).
    func openStream<Request: ResourceRequest>(
        _ request: Request,
        extraFields: HTTPFields = [:],
        deadline: ContinuousClock.Instant? = nil
    ) async throws(APIError) -> StreamedResponse {
        let opened = try await open(request, body: .streamed(extraFields: extraFields, deadline: deadline))
        let response = opened.response
        do throws(APIError) {
            guard response.status.kind == .successful else {
                // An error's body is small and read whole, within the time of one silence.
                let deadline = Swift.min(opened.deadline, .now + opened.prepared.options.timeout)
                let body = try await collect(response.body, upTo: opened.maxBytes, deadline: deadline)
                // As a call fails: an encoded body it cannot read, or the status with the error's
                // body decoded.
                throw ResponseValidator.encodingRefusal(response, body: body)
                    ?? ResponseValidator.failure(response, body: body, for: request, decoder: opened.prepared.options.responseDecoder)
            }
            if let encoding = response.headerFields[.contentEncoding], !ResponseValidator.isIdentity(encoding) {
                throw APIError(kind: .unsupportedContentEncoding, status: response.status, detail: "the body is encoded, and the transport did not decode it")
                    .at(.validatingResponse)
            }
            let expected = response.headerFields[.contentLength].flatMap { Int($0) }
            return StreamedResponse(
                status: response.status,
                headerFields: response.headerFields,
                body: ResponseBodyStream(
                    body: response.body, expectedLength: expected, method: opened.prepared.method, path: opened.prepared.path, deadline: opened.deadline),
                maxBytes: opened.maxBytes,
                deadline: opened.deadline
            )
        } catch {
            throw opened.naming(error)
        }
    }

    /// The deadline of a stream without ``RequestOptions/streamTimeout``: far enough never to
    /// come, near enough for every clock to hold.
    static let unboundedStream = Duration.seconds(100 * 365 * 24 * 3600)

    /// When a stream started at `start` must be over: ``RequestOptions/streamTimeout`` later (a
    /// negative one is zero, one longer than ``unboundedStream`` is that), or never.
    static func streamDeadline(from start: ContinuousClock.Instant, options: RequestOptions) -> ContinuousClock.Instant {
        start + Swift.min(Swift.max(options.streamTimeout ?? unboundedStream, .zero), unboundedStream)
    }
}

/// A response whose body is still arriving (``API/stream(_:)``).
public struct StreamedResponse: Sendable {
    /// The status, 200–299.
    public let status: HTTPResponse.Status
    /// The header fields.
    public let headerFields: HTTPFields
    /// The body, read once, as it arrives.
    public let body: ResponseBodyStream
    /// The ``RequestOptions/maxResponseBytes`` the call's steps left (a middleware may change
    /// it, ``CallContext/options``), or the call's own when no transport answered: the longest
    /// line or event a reader of the body (``API/lines(_:)``, ``API/events(_:reconnect:)``) allows.
    package let maxBytes: Int
    /// When the stream must be over, as the call's steps left it (``RequestOptions/streamTimeout``,
    /// which a middleware may change), or the call's own when no transport answered.
    package let deadline: ContinuousClock.Instant
}

/// The body of a ``StreamedResponse``: buffers as they arrive, read once.
///
/// Reading throws ``APIError``: a body that ends before its `Content-Length` is
/// ``APIError/Kind/transport``, a server silent for longer than ``RequestOptions/timeout`` or a
/// stream past ``RequestOptions/streamTimeout`` is ``APIError/Kind/timeout``.
public struct ResponseBodyStream: AsyncSequence, Sendable {
    /// A part of the body.
    public typealias Element = ByteBuffer
    /// What reading throws: an ``APIError``.
    public typealias Failure = any Error

    let body: TransportBody
    /// The body's `Content-Length`, when the server sent one.
    public let expectedLength: Int?
    let method: HTTPRequest.Method
    let path: String
    let deadline: ContinuousClock.Instant

    /// Reads the body.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: TransportBody.AsyncIterator
        let stream: ResponseBodyStream
        var received = 0
        var done = false

        /// The next part, or `nil` at the end of a complete body.
        public mutating func next() async throws -> ByteBuffer? {
            guard !done else { return nil }
            do {
                if let chunk = try await base.next() {
                    received += chunk.readableBytes
                    return chunk
                }
                done = true
                if let expected = stream.expectedLength, received != expected {
                    throw TransportError.bodyEndedEarly(received: received, expected: expected)
                }
                return nil
            } catch {
                done = true
                throw APIError.classifying(error, deadline: stream.deadline).with(method: stream.method, path: stream.path)
            }
        }
    }

    /// Starts reading the body.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: body.makeAsyncIterator(), stream: self)
    }

    /// The whole body as one buffer, refusing one larger than `maxBytes`.
    ///
    /// - Throws: ``APIError``: ``APIError/Kind/responseTooLarge`` as soon as more than
    ///   `maxBytes` arrived.
    public func collect(upTo maxBytes: Int) async throws(APIError) -> ByteBuffer {
        var collected = ByteBuffer()
        do {
            for try await var chunk in self {
                guard chunk.readableBytes <= maxBytes - collected.readableBytes else {
                    throw APIError(kind: .responseTooLarge).with(method: method, path: path)
                }
                collected.writeBuffer(&chunk)
            }
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError.classifying(error, deadline: deadline).with(method: method, path: path)
        }
        return collected
    }
}
