/// A step around the transport: sees each request on its way out and each response on its way back.
///
/// An ``API`` runs its middlewares in order, the first outermost, with the ``HTTPTransport`` innermost.
/// A middleware may change the request, retry `next`, replace the response, or throw.
///
/// ```swift
/// struct RequireJSON: APIMiddleware {
///     func intercept(
///         _ request: TransportRequest, context: CallContext,
///         next: (TransportRequest, CallContext) async throws -> TransportResponse
///     ) async throws -> TransportResponse {
///         let response = try await next(request, context)
///         guard response.headerFields[.contentType]?.hasPrefix("application/json") ?? true else {
///             throw MyError.notJSON
///         }
///         return response
///     }
/// }
/// ```
public protocol APIMiddleware: Sendable {
    /// Handles `request`, calling `next` to pass it on.
    func intercept(
        _ request: TransportRequest,
        context: CallContext,
        next: (TransportRequest, CallContext) async throws -> TransportResponse
    ) async throws -> TransportResponse
}

/// A step whose every answer is one the steps after it gave, its ``TransportResponse`` collection
/// limits and redaction switches as they were set there: the package's own tracing, metrics,
/// retry, refresh, logging and redirect steps. The chain hands such a step the rest of the chain
/// as it is, without watching what it answers.
protocol AnswersFromTheStepsAfter: APIMiddleware {}
