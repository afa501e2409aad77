import Resourceful

/// A step that changes the call's options for the steps after it, as a user's middleware may.
struct ChangeOptions: APIMiddleware {
    let change: @Sendable (inout RequestOptions) -> Void

    init(_ change: @escaping @Sendable (inout RequestOptions) -> Void) {
        self.change = change
    }

    func intercept(
        _ request: TransportRequest,
        context: CallContext,
        next: (TransportRequest, CallContext) async throws -> TransportResponse
    ) async throws -> TransportResponse {
        var context = context
        change(&context.options)
        return try await next(request, context)
    }
}
