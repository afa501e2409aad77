import Foundation
import HTTPTypes
import NIOCore
import NIOFoundationEssentialsCompat

extension API {
    /// Calls `request` as a server-sent event stream (`text/event-stream`) and returns its events
    /// as they arrive, each event's `data` decoded as the request's `ResourceType` (a `String`
    /// type takes the data as it is).
    ///
    /// The stream is read as the WHATWG HTML standard says (event types, multi-line data, ids,
    /// `retry`, comments, a leading BOM, CR, LF or CRLF line ends). When it ends or breaks, it is
    /// opened again as a browser's `EventSource` does: after the server's `retry` time (or
    /// `reconnect`'s delay), growing with each connection that brings no event, with a little
    /// jitter, sending `Last-Event-ID` so that the server can go on where it stopped; at most
    /// `reconnect`'s ``EventStreamReconnection/maxAttempts`` times in a row without an event.
    /// Connections that end within ``EventStreamReconnection/delay`` of their start, whatever
    /// events they brought, are throttled by time: past three such connections in a row, each is
    /// followed by that delay at least, whatever `retry` says, doubled for each further one (up
    /// to ``EventStreamReconnection/maxDelay``).
    /// A request whose method is not idempotent (`POST`, `PATCH`) is not reconnected unless it
    /// carries an `Idempotency-Key` or chose to allow retries (``RequestOptions/allowsRetries``);
    /// every connection of such a stream then sends the same `Idempotency-Key` (its own, or
    /// one made for the stream).
    /// A `204 No Content` ends the sequence; a status outside 200–299, a body that is not an
    /// event stream, or an event longer than its cap (``APIError/Kind/responseTooLarge``) throws
    /// and ends it: only a connection that broke or fell silent is opened again. An event whose
    /// data does not decode throws ``APIError/Kind/decodingFailed``; reading on goes to the next
    /// event. Cancelling the reading task ends it at once.
    ///
    /// ```swift
    /// for try await event in api.events(WatchDeployments(app: "web")) {
    ///     print(event.type, event.data.state, event.id)
    /// }
    /// ```
    ///
    /// ``RequestOptions/timeout`` bounds each connection's wait for its head and each silence of
    /// the server (send comments to keep a quiet stream open);
    /// ``RequestOptions/maxResponseBytes`` is the longest event (as the middlewares left it,
    /// ``CallContext/options``, for each connection); ``RequestOptions/streamTimeout`` bounds the
    /// whole stream, reconnections included, as the middlewares left it for the first connection.
    public func events<Request: ResourceRequest>(
        _ request: Request,
        reconnect: EventStreamReconnection = EventStreamReconnection()
    ) -> ServerSentEvents<Request> {
        ServerSentEvents(api: self, request: request, reconnect: reconnect)
    }
}

/// How an event stream is opened again after it ended or broke (``API/events(_:reconnect:)``).
public struct EventStreamReconnection: Sendable, Hashable {
    /// The most reconnections in a row that bring no event: when one more would be needed, the
    /// sequence gives up, throwing the last connection's error (or ending, when it closed
    /// cleanly); `0` never reconnects.
    public var maxAttempts: Int
    /// The wait before reconnecting when the server did not set one with `retry` (3 seconds, as
    /// browsers); also the least wait, whatever `retry` says, after the fourth connection in a
    /// row that ended within this time (doubled for each such connection after it).
    public var delay: Duration
    /// The longest wait, however many connections in a row brought no event.
    public var maxDelay: Duration

    /// Reconnection as described.
    public init(maxAttempts: Int = 5, delay: Duration = .seconds(3), maxDelay: Duration = .seconds(60)) {
        self.maxAttempts = maxAttempts
        self.delay = delay
        self.maxDelay = maxDelay
    }

    /// No reconnection: the sequence ends with the first connection.
    public static let never = EventStreamReconnection(maxAttempts: 0)

    /// The wait before the next connection, when `failures` reconnections in a row brought no
    /// event and the server asked for `retry` milliseconds: the server's time (or ``delay``) at
    /// most ``maxDelay``, doubled per failure (at least ``delay`` once one failed), plus up to a
    /// fifth of it at random.
    func wait(failures: Int, retry: Int?) -> Duration {
        let base = retry.map { Duration.milliseconds(Swift.min($0, 86_400_000)) } ?? delay
        var wait = Swift.min(base, maxDelay)
        // A connection that brought nothing waits at least the client's own delay, so that a
        // server asking for `retry: 0` cannot make the reconnections spin.
        if failures > 0 { wait = Swift.max(wait, Swift.min(delay, maxDelay)) }
        for _ in 0..<Swift.min(failures, 16) where wait < maxDelay { wait *= 2 }
        wait = Swift.min(wait, maxDelay)
        return wait + wait * Double.random(in: 0...0.2)
    }
}

/// An event of a server-sent event stream, its data decoded (``API/events(_:reconnect:)``).
public struct ServerSentEvent<Value: Sendable>: Sendable {
    /// The event's type: its `event` field, `message` when it had none.
    public var type: String
    /// The event's data, decoded.
    public var data: Value
    /// The last event ID the stream set, this event's own `id` or an earlier one's; empty when
    /// none did. Sent as `Last-Event-ID` when the stream is opened again.
    public var id: String
}

/// The events of a server-sent event stream, decoded, across reconnections
/// (``API/events(_:reconnect:)``). Read it once.
public struct ServerSentEvents<Request: ResourceRequest>: AsyncSequence, Sendable {
    /// An event with its data decoded as the request's `ResourceType`.
    public typealias Element = ServerSentEvent<Request.ResourceType>
    /// What reading throws: an ``APIError``.
    public typealias Failure = any Error

    let api: API
    let request: Request
    let reconnect: EventStreamReconnection

    /// Reads the events.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let options: RequestOptions
        /// When the whole stream must be over: the call's ``RequestOptions/streamTimeout`` until
        /// the first connection answers, then the one the steps before the transport left.
        var deadline: ContinuousClock.Instant
        /// Whether ``deadline`` is the one the steps left (the first connection answered).
        var deadlineFromSteps = false
        /// The `Idempotency-Key` every connection sends, when one is made for the stream.
        let idempotencyKey: String?
        var parser: ServerSentEventParser
        var pending: [ServerSentEventParser.Event] = []
        /// The next of `pending` to hand out.
        var next = 0
        var body: ResponseBodyStream.AsyncIterator?
        /// Reconnections since the last event.
        var failures = 0
        /// Connections in a row, this one included, that ended within the client's delay: past
        /// ``quickBurst`` of them, each is followed by at least that delay, doubled for each
        /// further one.
        var quickInARow = 0
        /// How many short connections in a row follow the server's `retry` as it is.
        static var quickBurst: Int { 3 }
        var eventsThisConnection = 0
        /// When the current connection was opened.
        var connectedAt = ContinuousClock.now
        var finished = false
        /// What ends the sequence once the events before it are handed out.
        var failure: APIError?
        /// Last: the one stored property whose size depends on `Request`. Every one before it is
        /// at an offset fixed when compiled, read without asking the runtime for this type's
        /// metadata (the code is generic, not specialized for the caller's request).
        let sequence: ServerSentEvents

        init(sequence: ServerSentEvents) {
            self.sequence = sequence
            options = sequence.api.defaultOptions.applying(sequence.request)
            deadline = API.streamDeadline(from: .now, options: options)
            parser = ServerSentEventParser(maxBytes: options.maxResponseBytes)
            // Events of a stream of Strings keep their data as text, handed out as it is: whether
            // a String is a `ResourceType` depends on the type alone, so an empty one tells.
            parser.keepsText = (String() as? Request.ResourceType) != nil
            // One key for the whole stream: a reconnection is the same request sent again.
            idempotencyKey = RetryMiddleware.keyForConnections(
                method: sequence.request.verb.method(update: options.updateMethod),
                options: options,
                headers: sequence.request.headers
            )
        }

        /// The next event, or `nil` when the stream ended for good.
        public mutating func next() async throws -> ServerSentEvent<Request.ResourceType>? {
            while !finished {
                if next < pending.count {
                    // Taken and counted first, then decoded by a function that does not take
                    // `self`: a method called here copied the whole iterator (options, parser,
                    // buffers) for each event, and destroyed the copy after it.
                    let event = pending[next]
                    next += 1
                    let value: Request.ResourceType
                    do {
                        value = try decodeEventData(event, as: Request.ResourceType.self, decoder: options.responseDecoder)
                    } catch {
                        throw decodingFailure(error, eventType: event.type)
                    }
                    return ServerSentEvent(type: event.type, data: value, id: event.lastEventID)
                }
                pending.removeAll(keepingCapacity: true)
                next = 0
                if let failure {
                    finished = true
                    throw failure
                }
                if body == nil {
                    try await connect()
                    continue
                }
                let chunk: ByteBuffer?
                do {
                    chunk = try await body?.next()
                } catch let error as APIError where error.kind == .transport || error.kind == .timeout {
                    // Only a broken or silent connection is opened again.
                    try await connectionEnded(after: error)
                    continue
                } catch {
                    finished = true
                    throw error
                }
                guard let chunk else {
                    try await connectionEnded(after: nil)
                    continue
                }
                do {
                    try parser.feed(chunk, into: &pending)
                } catch {
                    // The stream itself is at fault, not the connection: reconnecting would
                    // bring the same event again. The events before it are handed out first.
                    body = nil
                    failure = streamError(.responseTooLarge, "an event or line of the stream is longer than \(parser.maxBytes) bytes")
                }
                eventsThisConnection += pending.count
            }
            return nil
        }

        /// Opens a connection, sending the last event ID.
        private mutating func connect() async throws {
            var fields: HTTPFields = [.accept: "text/event-stream"]
            if !parser.lastEventID.isEmpty, let name = HTTPField.Name("Last-Event-ID") {
                fields[name] = parser.lastEventID
            }
            if let idempotencyKey { fields[.idempotencyKey] = idempotencyKey }
            eventsThisConnection = 0
            connectedAt = .now
            parser.restart()
            let response: StreamedResponse
            do {
                // The first connection lets the middlewares set the stream's deadline
                // (``RequestOptions/streamTimeout``); the later ones keep it.
                response = try await sequence.api.openStream(sequence.request, extraFields: fields, deadline: deadlineFromSteps ? deadline : nil)
            } catch where error.kind == .transport || error.kind == .timeout {
                try await connectionEnded(after: error)
                return
            } catch {
                finished = true
                throw error
            }
            if response.status == .noContent {
                // The server says there is nothing more: no reconnection.
                finished = true
                return
            }
            let type = response.headerFields[.contentType].map { MediaType.essence(of: $0) }
            guard type == "text/event-stream" else {
                finished = true
                let named = type.flatMap { ResponseValidator.commonMediaType(String($0)) } ?? "of another media type"
                throw streamError(.decodingFailed, status: response.status, "the body is \(named), not text/event-stream")
            }
            // The longest event is the cap the middlewares left for this connection.
            parser.maxBytes = response.maxBytes
            if !deadlineFromSteps {
                deadline = response.deadline
                deadlineFromSteps = true
            }
            body = response.body.makeAsyncIterator()
        }

        /// The connection ended, cleanly (`error` nil) or not: waits, then lets the loop reconnect,
        /// or ends the sequence when the attempts are spent.
        private mutating func connectionEnded(after error: APIError?) async throws {
            body = nil
            if eventsThisConnection > 0 { failures = 0 }
            // A server answering each connection with a few events and `retry: 0` would
            // otherwise be reconnected to at once, for ever: a connection shorter than the
            // client's delay, whatever it brought, is followed by that delay at least, doubled
            // for each such connection in a row.
            let floor = Swift.min(sequence.reconnect.delay, sequence.reconnect.maxDelay)
            let quick = connectedAt.duration(to: .now) < floor
            quickInARow = quick ? quickInARow + 1 : 0
            let attempts = sequence.reconnect.maxAttempts
            // A POST or PATCH stream is opened again only when the request allows retries: the
            // server may have acted on it.
            guard failures < attempts, ContinuousClock.now < deadline, method.isIdempotent || options.allowsRetries else {
                finished = true
                if let error { throw error }
                return
            }
            // The first reconnection after an event waits the server's time; each one after a
            // connection that brought none waits longer.
            var wait = sequence.reconnect.wait(failures: failures, retry: parser.retry)
            if quickInARow > Self.quickBurst {
                var least = floor
                for _ in 0..<Swift.min(quickInARow - Self.quickBurst - 1, 16) where least < sequence.reconnect.maxDelay { least *= 2 }
                wait = Swift.max(wait, Swift.min(least, sequence.reconnect.maxDelay))
            }
            failures += 1
            do {
                // Never past the stream's own deadline.
                try await Task.sleep(until: Swift.min(ContinuousClock.now + wait, deadline), clock: .continuous)
            } catch {
                finished = true
                throw streamError(.cancelled, "while waiting to reconnect")
            }
            // A wait cut short by the stream's deadline sends nothing more.
            guard ContinuousClock.now < deadline else {
                finished = true
                throw streamError(.timeout, "the stream's deadline passed while waiting to reconnect")
            }
        }

        private var method: HTTPRequest.Method { sequence.request.verb.method(update: options.updateMethod) }

        /// An error of this stream itself (not of a call that opened it), naming its method and
        /// masked path.
        private func streamError(
            _ kind: APIError.Kind, status: HTTPResponse.Status? = nil, _ detail: String, underlying: (any Error)? = nil
        ) -> APIError {
            APIError(kind: kind, status: status, detail: detail, underlying: underlying).with(method: method, path: sequence.api.maskedPath(sequence.request.path))
        }

        /// What an event whose data did not decode throws.
        private func decodingFailure(_ error: any Error, eventType: String) -> APIError {
            var failure = streamError(.decodingFailed, "the data of an event of type \(Self.printable(eventType)) is not a \(Request.ResourceType.self)", underlying: error)
            if let decoding = error as? DecodingError { failure.codingPath = APIError.codingPath(of: decoding) }
            return failure
        }

        /// An event type as an error names it: letters, digits and `-_.:` only, at most 64.
        private static func printable(_ type: String) -> String {
            let allowed = type.unicodeScalars.prefix(64).filter { $0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil || "-_.:".unicodeScalars.contains($0)) }
            return "'" + String(String.UnicodeScalarView(allowed)) + "'"
        }
    }

    /// Starts reading: the first call of `next()` opens the stream.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(sequence: self)
    }
}

/// An event's data as a `Value`: the text itself when the parser kept it as text (a `Value` is a
/// String), else what `decoder` makes of the bytes the parser kept (no String made, no second
/// copy). Not a method of the iterator, so that nothing copies the iterator to call it.
private func decodeEventData<Value: Decodable>(
    _ event: ServerSentEventParser.Event,
    as type: Value.Type,
    decoder: any ResponseDecoder
) throws -> Value {
    if let text = event.text, let value = text as? Value { return value }
    return try decoder.decode(type, from: event.bytes)
}
