import Resourceful
import Testing

/// Expects `body` to throw ``APIError/Kind/invalidConfiguration`` and returns the configuration
/// problem it carries.
func expectConfigError(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Void
) async -> APIConfigError? {
    let error = await #expect(throws: APIError.self, sourceLocation: sourceLocation) { try await body() }
    #expect(error?.kind == .invalidConfiguration, sourceLocation: sourceLocation)
    let problem = error?.underlying as? APIConfigError
    #expect(problem != nil, sourceLocation: sourceLocation)
    if let error, let problem { #expect(error.description.contains(problem.description), sourceLocation: sourceLocation) }
    return problem
}
