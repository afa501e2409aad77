import Foundation
@testable import Resourceful
import ResourcefulTesting

/// One `show x` call to `url` through a live transport made from the settings `configure` makes,
/// reading `environment` in place of the process's variables (quick retries); the error, if any.
func liveCall(
    _ url: String,
    environment: [String: String] = [:],
    proxyAuthorization: String? = nil,
    configure: (inout APIConfig.HTTPSettings) -> Void = { _ in }
) async -> APIError? {
    var config = APIConfig(baseURL: URL(string: url)!, service: "s")
    config.retry = .init(maxAttempts: 3, baseDelay: .milliseconds(5), maxDelay: .milliseconds(20))
    configure(&config.http)
    let transport = AsyncHTTPClientTransport(settings: config.http, environment: environment, proxyAuthorization: proxyAuthorization)
    let api = API(dependencies: APIDependencies(apiConfig: config, transport: transport))
    var failure: APIError?
    do {
        _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "x"))
    } catch {
        failure = error
    }
    try? await transport.shutdown()
    return failure
}
