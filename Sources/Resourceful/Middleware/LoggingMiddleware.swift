import HTTPTypes
package import Logging
import NIOCore
import Foundation

/// Writes one line per request and one per response or failure through the call's logger,
/// with secrets masked.
///
/// Lines are written at `debug` (a logger at `info` or above writes nothing), with fixed messages
/// and the details as metadata under `resourceful.`: `request-id`, `method`, `path`, `query`,
/// `status`, `duration-ms`, `request.headers`, `response.headers`, `request.body`,
/// `response.body`, `error`. Masking is described in <doc:Logging>.
package struct LoggingMiddleware: APIMiddleware {
    /// The level the lines are written at.
    package var level: Logger.Level

    /// Creates the logging step.
    package init(level: Logger.Level = .debug) {
        self.level = level
    }

    /// Logs `request`, passes it on, and logs what came back.
    package func intercept(
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
            "resourceful.path": .string("/" + request.target.path),
        ]
        if !request.target.query.isEmpty { metadata["resourceful.query"] = .string(redactor.query(request.target.query)) }
        var requestMetadata = metadata
        requestMetadata["resourceful.request.headers"] = .dictionary(redactor.headers(request.headerFields))
        if let body = request.body {
            requestMetadata["resourceful.request.body"] = .string(
                context.options.shouldRedactRequestBody
                    ? "<redacted, \(body.readableBytes) bytes>"
                    : redactor.body(body, contentType: request.headerFields[.contentType])
            )
        }
        logger.log(level: level, "Sending request", metadata: requestMetadata)

        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            metadata["resourceful.status"] = .stringConvertible(response.status.code)
            metadata["resourceful.duration-ms"] = .string(Self.milliseconds(since: start))
            metadata["resourceful.response.headers"] = .dictionary(redactor.headers(response.headerFields))
            if response.body.readableBytes > 0 {
                metadata["resourceful.response.body"] = .string(
                    context.options.shouldRedactResponseBody
                        ? "<redacted, \(response.body.readableBytes) bytes>"
                        : redactor.body(response.body, contentType: response.headerFields[.contentType])
                )
            }
            logger.log(level: level, "Received response", metadata: metadata)
            return response
        } catch {
            metadata["resourceful.duration-ms"] = .string(Self.milliseconds(since: start))
            metadata["resourceful.error"] = .string(APIError.wrapping(error).kind.description)
            logger.log(level: level, "Request failed", metadata: metadata)
            throw error
        }
    }

    private static func milliseconds(since start: ContinuousClock.Instant) -> String {
        (ContinuousClock.now - start).millisecondsText
    }
}
