import Foundation
import HTTPTypes
import NIOCore
import Resourceful
import ResourcefulTesting
import Testing

/// Code written against the former transport names still compiles and means the same.
@Suite struct DeprecatedNamesTests {
    @available(*, deprecated)
    @Test func formerTransportNamesStillBuildAWorkingAPI() async throws {
        let stub: StubHTTPClient = StubTransport { _ in TransportResponse(status: .ok, body: .init(string: "{}")) }
        var dependencies = APIDependencies(apiConfig: APIConfig(baseURL: URL(string: "http://127.0.0.1:9")!, service: "s"), httpClient: stub)
        #expect(dependencies.httpClient as? StubTransport === stub)
        let replacement = StubTransport { _ in TransportResponse(status: .noContent) }
        dependencies.httpClient = replacement
        #expect(dependencies.transport as? StubTransport === replacement)
        let container: any HasHTTPClient = dependencies
        #expect(container.httpClient as? StubTransport === replacement)
        let _: HTTPClientConformance<StubTransport>.Type = HTTPTransportConformance<StubTransport>.self
        let _: RecordingHTTPClient.Type = RecordingTransport.self
        let _: ReplayingHTTPClient.Type = ReplayingTransport.self
        _ = try await API(dependencies: dependencies).call(AdHocRequest<Empty, Empty>(.delete, "things/1"))
        #expect(replacement.requests.count == 1)
    }
}
