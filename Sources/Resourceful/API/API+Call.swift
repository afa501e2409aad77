import Foundation
import HTTPTypes
import NIOCore
import NIOFoundationEssentialsCompat
import Synchronization

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

    /// Step 1: the storage's `Authorization` and the built request.
    func build<Request: ResourceRequest>(
        _ request: Request,
        options: RequestOptions,
        start: ContinuousClock.Instant
    ) async throws(APIError) -> RequestBuilder.Built {
        let credential: Credential?
        do {
            credential = try await CredentialLookup.credential(
                from: authenticationStorage,
                service: options.service,
                deadline: start + options.timeout,
                honoursDeadline: storageHonoursDeadline
            )
        } catch let error as APIError where error.kind == .timeout || error.kind == .cancelled {
            throw APIError(kind: error.kind, detail: "while looking up the credential", underlying: error.underlying).at(.credentials)
        } catch is CancellationError {
            throw APIError(kind: .cancelled, detail: "while looking up the credential").at(.credentials)
        } catch where ContinuousClock.now >= start + options.timeout {
            // A storage bounding its own wait by a time-out close to the call's may fail a moment
            // before the call's deadline is seen: past the deadline, the call has timed out.
            throw APIError(kind: .timeout, detail: "while looking up the credential", underlying: error).at(.credentials)
        } catch let error as any SecretFreeDescription {
            throw APIError(kind: .authentication, detail: error.description, underlying: error).at(.credentials)
        } catch {
            throw APIError(kind: .authentication, underlying: error).at(.credentials)
        }
        var built: RequestBuilder.Built
        do throws(APIError) {
            built = try builder.build(request, options: options, authorization: credential?.header, start: start)
        } catch {
            throw error.at(.buildingRequest)
        }
        built.credentialExpiresAt = credential?.expiresAt
        return built
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

    /// 16 lowercase hex digits: one allocation, no system call.
    ///
    /// A per-process counter, offset by a random seed drawn once, through SplitMix64's finalizer.
    /// The finalizer is a bijection on `UInt64`, so two calls of one process never share an ID, and
    /// the seed makes IDs of different processes unlikely to meet. (`UInt64.random` would ask the
    /// kernel for randomness on every call.)
    static func makeRequestID() -> String {
        var value = RequestIDSource.seed &+ RequestIDSource.counter.wrappingAdd(1, ordering: .relaxed).oldValue
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        value ^= value >> 31
        return String(unsafeUninitializedCapacity: 16) { buffer in
            let digits: StaticString = "0123456789abcdef"
            for index in 0..<16 {
                buffer[index] = digits.utf8Start[Int((value >> (60 - 4 * UInt64(index))) & 0xF)]
            }
            return 16
        }
    }
}

extension API {
    /// When a stream started at `start` must be over: `streamTimeout` later (a negative one is
    /// zero, one longer than ``unboundedStream`` is that), or never.
    static func streamDeadline(from start: ContinuousClock.Instant, streamTimeout: Duration?) -> ContinuousClock.Instant {
        start + Swift.min(Swift.max(streamTimeout ?? unboundedStream, .zero), unboundedStream)
    }
}

/// The state behind ``API/makeRequestID()``.
private enum RequestIDSource {
    static let seed = UInt64.random(in: .min ... .max)
    static let counter = Atomic<UInt64>(0)
}

extension API {
    /// The request a call of `request` would send, as a `curl` command to paste into a terminal or
    /// a ticket: method, URL, header fields and body, one option per line, with every value the
    /// logger masks (``APIConfig/LogSettings``) replaced by `***`: the `Authorization` value,
    /// masked header fields, query values and JSON, form and multipart fields. A body that is not
    /// text is left out, with a line saying so.
    ///
    /// ```swift
    /// print(try await api.curl(for: CreateCharge(amount: 500)))
    /// // curl --request POST 'https://api.example.com/v1/charges?expand%5B%5D=customer' \
    /// //   --header 'Authorization: ***' \
    /// //   …
    /// ```
    ///
    /// - Throws: ``APIError``, as ``call(_:)`` would when building the same request.
    public func curl<Request: ResourceRequest>(for request: Request) async throws(APIError) -> String {
        CURLCommand(redactor: defaultOptions.redactor).render(try await transportRequest(for: request))
    }
}
