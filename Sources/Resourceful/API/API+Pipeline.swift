import HTTPTypes

extension API {
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
}
