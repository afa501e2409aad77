import Resourceful

/// A step that records what `next` threw, and throws it on: an `APIError` as its kind and stage
/// (`transport at transport`), any other error as `raw` and its type.
struct ErrorWitness: APIMiddleware {
    let seen: Locked<[String]>

    func intercept(
        _ request: TransportRequest, context: CallContext,
        next: (TransportRequest, CallContext) async throws -> TransportResponse
    ) async throws -> TransportResponse {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            seen.withLock { $0.append("\(error.kind) at \(error.stage.map(String.init(describing:)) ?? "none")") }
            throw error
        } catch {
            seen.withLock { $0.append("raw \(type(of: error))") }
            throw error
        }
    }
}
