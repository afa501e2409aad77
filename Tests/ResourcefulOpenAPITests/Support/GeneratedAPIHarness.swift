import Foundation
import Resourceful
import ResourcefulTesting

/// A MockServer on loopback and an `API` pointed at it, with `credential` for the service.
enum GeneratedAPIHarness {
    static let service = "generated"
    static let credential = "Bearer gen-t0ken-7a1e"

    static func run<T>(
        configure: (inout APIConfig) -> Void = { _ in },
        _ body: (API, MockServer) async throws -> T
    ) async throws -> T {
        let server = try await MockServer.start()
        var config = APIConfig(baseURL: server.baseURL.appending(path: "v1"), service: service)
        configure(&config)
        let transport = AsyncHTTPClientTransport(settings: config.http)
        let storage = InMemoryAuthenticationStorage([service: credential])
        let api = API(dependencies: APIDependencies(apiConfig: config, authenticationStorage: storage, transport: transport))
        do {
            let result = try await body(api, server)
            try await transport.shutdown()
            try await server.shutdown()
            return result
        } catch {
            try? await transport.shutdown()
            try? await server.shutdown()
            throw error
        }
    }
}
