public import HTTPTypes
public import Logging
import NIOCore
import Foundation

/// Writes one line per request and one per response or failure through the call's logger,
/// with secrets masked.
///
/// Lines are written at `debug` (a logger at `info` or above writes nothing), with fixed messages
/// and the details as metadata under `resourceful.`: `request-id`, `method`, `path`, `query`,
/// `status`, `duration-ms`, `request.headers`, `response.headers`, `request.body`,
/// `response.body`, `error`. Masking is described in <doc:Logging>. Which header fields and bodies
/// are written is the step's to choose; what is written is masked all the same.
///
/// A request body of collected bytes is written on the line after the answer ("Received
/// response"), so that a step after this one that redacts it
/// (``CallContext/options``, ``RequestOptions/shouldRedactRequestBody``) is honoured: a body
/// either switch redacts shows only its size, and so does the body of a request that failed
/// without an answer. A streamed body, or one redacted already, shows its size on the
/// "Sending request" line. Response bodies follow the same two switches:
///
/// ```swift
/// let logging = LoggingMiddleware(level: .info, headers: .only(["Content-Type", "X-Request-Id"]), logsResponseBody: false)
/// let api = API(dependencies: deps, middlewares: [TracingMiddleware(), RetryMiddleware(), logging, RedirectMiddleware()])
/// ```
public struct LoggingMiddleware: APIMiddleware, AnswersFromTheStepsAfter {
    /// Which header fields the lines name.
    public enum HeaderSelection: Sendable, Equatable {
        /// None.
        case none
        /// Every field, masked values replaced.
        case all
        /// Only these fields (names compared without regard to case), masked values replaced.
        case only([HTTPField.Name])
    }

    /// The level the lines are written at.
    public var level: Logger.Level
    /// Which header fields the lines name.
    public var headers: HeaderSelection
    /// Whether the request body is written (masked, cut to ``APIConfig/LogSettings/maxBodyBytes``);
    /// never for a request that redacts it.
    public var logsRequestBody: Bool
    /// Whether the response body is written (masked, cut); never for a request that redacts it.
    public var logsResponseBody: Bool

    /// Creates the logging step.
    public init(level: Logger.Level = .debug, headers: HeaderSelection = .all, logsRequestBody: Bool = true, logsResponseBody: Bool = true) {
        self.level = level
        self.headers = headers
        self.logsRequestBody = logsRequestBody
        self.logsResponseBody = logsResponseBody
    }

    /// Logs `request`, passes it on, and logs what came back.
    public func intercept(
        _ request: TransportRequest,
        context: CallContext,
        next: (TransportRequest, CallContext) async throws -> TransportResponse
    ) async throws -> TransportResponse {
        let logger = context.logger
        guard logger.logLevel <= level else { return try await next(request, context) }
        let redactor = context.options.redactor
        var metadata: Logger.Metadata = [
            "resourceful.request-id": .string(context.requestID),
            "resourceful.method": .string(request.method.rawValue),
            // A segment may hold an encoded URL with its userinfo, or a `;jsessionid=`.
            "resourceful.path": .string(redactor.maskedURL("/" + request.target.path)),
        ]
        if !request.target.query.isEmpty { metadata["resourceful.query"] = .string(redactor.query(request.target.query)) }
        var requestMetadata = metadata
        if headers != .none { requestMetadata["resourceful.request.headers"] = .dictionary(redactor.headers(selected(request.headerFields))) }
        // A step after this one may still redact the body: one of collected bytes is written
        // with the answer, under the switches in force at the transport; before it only when
        // its size alone is shown (a stream, or a body redacted already).
        var deferredBody: ByteBuffer?
        if logsRequestBody, let body = request.body {
            if let bytes = body.bytes, !context.options.shouldRedactRequestBody {
                deferredBody = bytes
            } else {
                requestMetadata["resourceful.request.body"] = .string(
                    Self.text(of: body, redacted: context.options.shouldRedactRequestBody, contentType: request.headerFields[.contentType], redactor: redactor)
                )
            }
        }
        logger.log(level: level, "Sending request", metadata: requestMetadata)

        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            metadata["resourceful.status"] = .stringConvertible(response.status.code)
            metadata["resourceful.duration-ms"] = .string(Self.milliseconds(since: start))
            if headers != .none { metadata["resourceful.response.headers"] = .dictionary(redactor.headers(selected(response.headerFields))) }
            // The switches a step after this one set reach the transport and come back with its
            // answer; a switch set here or there redacts.
            let limits = response.collectionLimits
            if let deferredBody {
                let redacted = context.options.shouldRedactRequestBody || limits?.redactsRequestBody == true
                metadata["resourceful.request.body"] = .string(
                    Self.text(of: TransportBody(deferredBody), redacted: redacted, contentType: request.headerFields[.contentType], redactor: redactor)
                )
            }
            if logsResponseBody, !response.body.isEmpty {
                let redacted = context.options.shouldRedactResponseBody || limits?.redactsResponseBody == true
                metadata["resourceful.response.body"] = .string(
                    Self.text(of: response.body, redacted: redacted, contentType: response.headerFields[.contentType], redactor: redactor)
                )
            }
            logger.log(level: level, "Received response", metadata: metadata)
            guard response.body.bytes == nil else { return response }
            // A stream: its size and time are known at its end, its bytes are never logged.
            let (level, deadline) = (self.level, request.deadline)
            var base = metadata
            base["resourceful.request.body"] = nil
            base["resourceful.response.body"] = nil
            base["resourceful.response.headers"] = nil
            let ended = base
            var observed = response
            observed.body = response.body.observingEnd { end in
                var ending = ended
                ending["resourceful.response.bytes"] = .stringConvertible(end.bytes)
                ending["resourceful.duration-ms"] = .string(Self.milliseconds(since: start))
                if let error = end.error {
                    ending["resourceful.error"] = .string(APIError.classifying(error, deadline: deadline).kind.description)
                    logger.log(level: level, "Stream ended early", metadata: ending)
                } else {
                    logger.log(level: level, "Stream ended", metadata: ending)
                }
            }
            return observed
        } catch {
            metadata["resourceful.duration-ms"] = .string(Self.milliseconds(since: start))
            metadata["resourceful.error"] = .string(APIError.kindName(of: error))
            if let deferredBody {
                // No answer tells which switches a step after this one set: its size only.
                metadata["resourceful.request.body"] = .string(
                    Self.text(of: TransportBody(deferredBody), redacted: true, contentType: nil, redactor: redactor)
                )
            }
            logger.log(level: level, "Request failed", metadata: metadata)
            throw error
        }
    }

    /// The fields ``headers`` selects.
    private func selected(_ fields: HTTPFields) -> HTTPFields {
        guard case .only(let names) = headers else { return fields }
        return fields.filter { names.contains($0.name) }
    }

    /// A body as a line shows it: masked and cut, only its size when redacted, and only its size
    /// (when known) for a stream, which is read by whoever consumes it, not by the log.
    private static func text(of body: TransportBody, redacted: Bool, contentType: String?, redactor: Redactor) -> String {
        guard let bytes = body.bytes else { return "<streamed, \(body.length.map { "\($0) bytes" } ?? "size unknown")>" }
        return redacted ? "<redacted, \(bytes.readableBytes) bytes>" : redactor.body(bytes, contentType: contentType)
    }

    private static func milliseconds(since start: ContinuousClock.Instant) -> String {
        (ContinuousClock.now - start).millisecondsText
    }
}
