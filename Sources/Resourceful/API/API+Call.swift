import Foundation
import HTTPTypes
import NIOCore
import NIOFoundationEssentialsCompat

// One call, from its entry to the decoded value, in the order it runs: the entry points, the
// pipeline every entry point shares (prepare: options, credential, built request; open: the
// middlewares around the transport), then the body collected, validated and decoded.

extension API {
    /// Calls `request` and returns its decoded value.
    ///
    /// - Throws: ``APIError``.
    public func call<Request: ResourceRequest>(_ request: Request) async throws(APIError) -> Request.ResourceType {
        try await response(request).value
    }

    /// Calls `request` and returns its decoded value with the response's status and header fields.
    ///
    /// - Throws: ``APIError``.
    public func response<Request: ResourceRequest>(
        _ request: Request
    ) async throws(APIError) -> APIResponse<Request.ResourceType> {
        try await perform(request, target: nil)
    }

    /// Calls `request`, sent to `target` instead of its own when one is given (a pagination link):
    /// the pipeline (``open(_:body:target:)``), then the body collected, validated and decoded.
    func perform<Request: ResourceRequest>(
        _ request: Request,
        target: RequestTarget?
    ) async throws(APIError) -> APIResponse<Request.ResourceType> {
        let opened = try await open(request, body: .collected, target: target)
        do throws(APIError) {
            let body = try await collect(opened.response.body, upTo: opened.maxBytes, deadline: opened.deadline)
            return try ResponseValidator.validate(opened.response, body: body, for: request, decoder: opened.prepared.options.responseDecoder)
        } catch {
            throw opened.naming(error)
        }
    }

    /// The request a call of `request` would hand to the middlewares, built as a call builds it
    /// (base URL, path, query or body, header fields, `Authorization` from the storage), without
    /// sending it: for dry runs, request signing and tests. Middlewares may still add to it
    /// (trace context).
    ///
    /// - Throws: ``APIError``, as ``call(_:)`` would for the same request.
    public func transportRequest<Request: ResourceRequest>(for request: Request) async throws(APIError) -> TransportRequest {
        try await prepare(request, body: .collected).built.request
    }

    /// How a call takes its response body.
    enum BodyHandling: Sendable {
        /// Collected whole once the response is in (``API/call(_:)``, pages).
        case collected
        /// Handed on as it arrives (``API/stream(_:)``, downloads, events, lines), with
        /// `extraFields` set on the request (`Range`, `Last-Event-ID`, `Accept`) and, when given, a
        /// deadline of its own (a download's or event stream's, over all its connections).
        case streamed(extraFields: HTTPFields = [:], deadline: ContinuousClock.Instant? = nil)
    }

    /// A call's request, built and ready for the middlewares.
    struct Prepared: Sendable {
        /// The request as the first middleware gets it.
        var built: RequestBuilder.Built
        /// The call's options: the configuration's, then the request's own.
        var options: RequestOptions
        /// The call's method, which every error of the call names.
        var method: HTTPRequest.Method
        /// The request's path, masked only when an error or a stream names it.
        var requestPath: ResourcePath

        /// The path as errors name it, masked as in log lines (``API/maskedPath(_:)``).
        var path: String { options.redactor.maskedURL(requestPath.encoded) }

        /// `error`, naming this call.
        func naming(_ error: APIError) -> APIError {
            error.with(method: method, path: path)
        }
    }

    /// A call sent: the response (its body collected or arriving) and what it was sent as.
    struct Opened: Sendable {
        /// The response the middlewares returned.
        var response: TransportResponse
        /// The request as it was prepared.
        var prepared: Prepared

        /// The largest body to collect: what the steps before the transport left
        /// (``CallContext/options``), or the call's own for a response no transport gave (a
        /// cached one).
        var maxBytes: Int { response.collectionLimits?.maxBytes ?? prepared.options.maxResponseBytes }
        /// When the body must be in, likewise.
        var deadline: ContinuousClock.Instant { response.collectionLimits?.deadline ?? prepared.built.request.deadline }

        /// `error`, naming this call.
        func naming(_ error: APIError) -> APIError {
            prepared.naming(error)
        }
    }

    /// The opening every call shares: its options, its credential and request (sent to `target`
    /// instead of its own when one is given: a pagination link), and how it takes its body.
    func prepare<Request: ResourceRequest>(
        _ request: Request,
        body: BodyHandling,
        target: RequestTarget? = nil,
        start: ContinuousClock.Instant = .now
    ) async throws(APIError) -> Prepared {
        let options = defaultOptions.applying(request)
        let method = request.verb.method(update: options.updateMethod)
        do throws(APIError) {
            var built = try await build(request, options: options, start: start)
            // The context, and so every log line, names the page actually asked for.
            if let target { built.request.target = target }
            if case .streamed(let extraFields, let deadline) = body {
                built.request.streamsResponseBody = true
                built.request.idleTimeout = options.timeout
                built.request.deadline = deadline ?? Self.streamDeadline(from: start, options: options)
                for field in extraFields { built.request.headerFields[field.name] = field.value }
            }
            return Prepared(built: built, options: options, method: method, requestPath: request.path)
        } catch {
            throw error.with(method: method, path: maskedPath(request.path))
        }
    }

    /// Step 1: the storage's `Authorization` and the built request.
    func build<Request: ResourceRequest>(
        _ request: Request,
        options: RequestOptions,
        start: ContinuousClock.Instant
    ) async throws(APIError) -> RequestBuilder.Built {
        let credential: Credential?
        let deadline = start + options.timeout
        do {
            credential = try await CredentialLookup.credential(
                from: authenticationStorage,
                service: options.service,
                deadline: deadline,
                honoursDeadline: storageHonoursDeadline
            )
        } catch {
            throw Self.credentialFailure(error, deadline: deadline)
        }
        var built: RequestBuilder.Built
        do throws(RequestBuilder.Failure) {
            built = try builder.build(request, options: options, authorization: credential?.header, start: start)
        } catch {
            throw error.apiError.at(.buildingRequest)
        }
        built.credentialExpiresAt = credential?.expiresAt
        return built
    }

    /// A failed credential lookup, classified once: a time-out or cancellation as such (a storage
    /// bounding its own wait by a time-out close to the call's may fail a moment before the call's
    /// deadline is seen: past the deadline, the call has timed out), anything else as
    /// ``APIError/Kind/authentication``, described only when its description is known to hold no
    /// secret.
    static func credentialFailure(_ error: any Error, deadline: ContinuousClock.Instant) -> APIError {
        var kind = APIError.Kind.authentication
        var detail: String? = "while looking up the credential"
        var underlying: (any Error)? = error
        switch error {
        case let error as APIError where error.kind == .timeout || error.kind == .cancelled:
            (kind, underlying) = (error.kind, error.underlying)
        case is CancellationError:
            (kind, underlying) = (.cancelled, nil)
        case _ where ContinuousClock.now >= deadline:
            kind = .timeout
        case let error as any SecretFreeDescription:
            detail = error.description
        default:
            detail = nil
        }
        return APIError(kind: kind, detail: detail, underlying: underlying).at(.credentials)
    }

    /// The context a call of `request` to `target` runs with: a new request ID, its options and
    /// this API's logger.
    func context<Request: ResourceRequest>(for request: Request, built: RequestBuilder.Built, options: RequestOptions) -> CallContext {
        CallContext(
            requestID: Self.makeRequestID(),
            verb: request.verb,
            target: built.request.target,
            pathTemplate: request.path.template,
            options: options,
            logger: logger,
            credentialExpiresAt: built.credentialExpiresAt,
            start: built.start
        )
    }

    /// The one pipeline every entry point goes through (call, response, pages, stream, download,
    /// events, lines): ``prepare(_:body:target:start:)``, then the middlewares around the
    /// transport, with a context of the call's own. The caller collects or reads the body; every
    /// error names the call's method and path.
    func open<Request: ResourceRequest>(
        _ request: Request,
        body: BodyHandling,
        target: RequestTarget? = nil
    ) async throws(APIError) -> Opened {
        let prepared = try await prepare(request, body: body, target: target)
        let context = context(for: request, built: prepared.built, options: prepared.options)
        do throws(APIError) {
            return Opened(response: try await send(prepared.built.request, context: context), prepared: prepared)
        } catch {
            throw prepared.naming(error)
        }
    }

    /// Step 2 and 3: runs the middlewares around the transport.
    func send(_ request: TransportRequest, context: CallContext) async throws(APIError) -> TransportResponse {
        do {
            return try await chain(request, context)
        } catch {
            throw APIError.classifying(error, deadline: request.deadline)
        }
    }

    /// Step 4: the whole body, as the simple path has it (a streamed body read to its end, no
    /// more than `maxBytes`).
    func collect(_ body: TransportBody, upTo maxBytes: Int, deadline: ContinuousClock.Instant) async throws(APIError) -> ByteBuffer {
        do {
            // Collected bytes (a transport's, or a cache's) are checked against the limit too.
            if body.bytes != nil { return try await body.collect(upTo: maxBytes) }
            // A stream is read within the call's deadline, however slowly it arrives.
            return try await Deadline.run(until: deadline) { try await body.collect(upTo: maxBytes) }
        } catch {
            throw APIError.classifying(error, deadline: deadline).at(.receivingBody)
        }
    }

    /// A path as an error names it, masked as in log lines: a query written into it
    /// (`ResourcePath(encoded:)`) with the values of masked keys replaced, a segment holding an
    /// encoded URL without its userinfo, masked path parameters replaced.
    func maskedPath(_ path: ResourcePath) -> String {
        defaultOptions.redactor.maskedURL(path.encoded)
    }
}

extension API {
    /// When a stream started at `start` must be over: `streamTimeout` later (a negative one is
    /// zero, one longer than ``unboundedStream`` is that), or never.
    static func streamDeadline(from start: ContinuousClock.Instant, streamTimeout: Duration?) -> ContinuousClock.Instant {
        start + Swift.min(Swift.max(streamTimeout ?? unboundedStream, .zero), unboundedStream)
    }
}

/// Asks a storage for a call's credential within the call's deadline.
///
/// The storages of this package answer from memory, or without blocking, or bound their own waits
/// by ``deadline`` and by cancellation (``DeadlineHonouringStorage``): they are asked directly. Any
/// other storage is raced against the deadline, so that one that hangs fails the call with
/// ``APIError/Kind/timeout`` at its deadline instead of holding it for ever.
package enum CredentialLookup {
    /// The deadline of the call whose credential is being looked up, for storages that wait.
    @TaskLocal package static var deadline: ContinuousClock.Instant?

    /// `storage`'s credential for `service`, with its expiry when it knows it, by `deadline`.
    package static func credential(
        from storage: any AuthenticationStorage,
        service: String,
        deadline: ContinuousClock.Instant,
        honoursDeadline: Bool? = nil
    ) async throws -> Credential? {
        if honoursDeadline ?? (storage is any DeadlineHonouringStorage) {
            return try await $deadline.withValue(deadline) {
                try await storage.credential(for: service)
            }
        }
        return try await Deadline.run(until: deadline) {
            try await storage.credential(for: service)
        }
    }
}

/// Step 4 of a call: a 2xx response decodes to the request's `ResourceType`, anything else
/// becomes an ``APIError`` with the decoded `ErrorResponse`.
enum ResponseValidator {
    /// Validates `response`, whose body collected is `body`.
    static func validate<Request: ResourceRequest>(
        _ response: TransportResponse,
        body: ByteBuffer,
        for request: Request,
        decoder: any ResponseDecoder
    ) throws(APIError) -> APIResponse<Request.ResourceType> {
        if let refusal = encodingRefusal(response, body: body) { throw refusal }
        guard response.status.kind == .successful else {
            throw failure(response, body: body, for: request, decoder: decoder)
        }
        let value: Request.ResourceType
        if Request.ResourceType.self == Empty.self, let empty = Empty() as? Request.ResourceType {
            value = empty
        } else {
            do {
                value = try decode(Request.ResourceType.self, from: body, decoder: decoder)
            } catch {
                var failure = APIError(kind: .decodingFailed, underlying: error).at(.decodingBody)
                failure.status = response.status
                if let decoding = error as? DecodingError {
                    failure.codingPath = APIError.codingPath(of: decoding)
                    failure.detail = body.readableBytes == 0 ? "the body is empty" : APIError.reason(of: decoding)
                }
                if let type = response.headerFields[.contentType], !MediaType.isJSON(type), body.readableBytes > 0 {
                    // The server's media type is response text: named only when it is a common one.
                    failure.detail = "the body is \(Self.commonMediaType(type) ?? "of another media type"), not JSON"
                }
                throw failure
            }
        }
        return APIResponse(value: value, status: response.status, headerFields: response.headerFields)
    }

    /// The error of a body the transport did not decode (an encoding it does not know, or
    /// decompression off); `nil` when there is none.
    static func encodingRefusal(_ response: TransportResponse, body: ByteBuffer) -> APIError? {
        guard body.readableBytes > 0, let encoding = response.headerFields[.contentEncoding], !isIdentity(encoding) else { return nil }
        return APIError(
            kind: .unsupportedContentEncoding,
            status: response.status,
            detail: "the body is encoded as \(commonEncoding(encoding) ?? "something other than gzip or deflate"), which is not decoded"
        ).at(.validatingResponse)
    }

    /// The error of a response whose status is not 2xx: ``APIError/Kind/unauthorized`` for a
    /// `401`, else ``APIError/Kind/unacceptableStatus``, with the body decoded as the request's
    /// `ErrorResponse` (or as problem details, when the server sends them and the request names
    /// no type of its own).
    static func failure<Request: ResourceRequest>(
        _ response: TransportResponse,
        body: ByteBuffer,
        for request: Request,
        decoder: any ResponseDecoder
    ) -> APIError {
        var error = APIError(kind: response.status == .unauthorized ? .unauthorized : .unacceptableStatus, status: response.status)
            .at(.validatingResponse)
        if body.readableBytes > 0 {
            if Request.ErrorResponse.self != Empty.self {
                error.errorResponse = try? decode(Request.ErrorResponse.self, from: body, decoder: decoder)
            } else if response.headerFields[.contentType].map({ MediaType.essence(of: $0) == "application/problem+json" }) == true {
                error.errorResponse = try? decode(ProblemDetails.self, from: body, decoder: JSONDecoder())
            }
        }
        return error
    }

    static func isIdentity(_ encoding: String) -> Bool {
        encoding.split(separator: ",").allSatisfy { $0.trimmingCharacters(in: .whitespaces).lowercased() == "identity" }
    }

    /// `encoding` when it is a registered content coding, else `nil` (it is response text).
    private static func commonEncoding(_ encoding: String) -> String? {
        let name = encoding.trimmingCharacters(in: .whitespaces).lowercased()
        return ["br", "zstd", "compress", "gzip", "deflate", "x-gzip", "exi", "pack200-gzip", "dcb", "dcz"].contains(name) ? name : nil
    }

    /// `contentType`'s media type when it is one of a few well-known ones, else `nil`.
    static func commonMediaType(_ contentType: String) -> String? {
        let type = String(MediaType.essence(of: contentType))
        let known: Set<String> = ["text/html", "text/plain", "text/xml", "application/xml", "application/octet-stream", "application/x-www-form-urlencoded"]
        return known.contains(type) ? type : nil
    }


    private static func decode<T: Decodable>(_ type: T.Type, from body: ByteBuffer, decoder: any ResponseDecoder) throws -> T {
        try decoder.decode(type, from: Data(buffer: body, byteTransferStrategy: .noCopy))
    }
}
