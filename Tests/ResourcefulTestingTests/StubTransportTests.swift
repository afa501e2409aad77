import Foundation
import HTTPTypes
import NIOCore
import Resourceful
import ResourcefulTesting
import Testing

@Suite struct StubTransportTests {
    @Test func answersWithTheHandlerAndRecordsRequests() async throws {
        let stub = StubTransport { request in
            TransportResponse(status: .ok, headerFields: [.contentType: "application/json"], body: ByteBuffer(string: #"{"n":\#(request.url.count)}"#))
        }
        let config = APIConfig(baseURL: URL(string: "https://api.example.com/v1")!, service: "s")
        let api = API(dependencies: APIDependencies(apiConfig: config, transport: stub))
        let result = try await api.call(AdHocRequest<[String: Int], Empty>(.show, "things/1"))
        #expect(stub.requests.map(\.url) == ["https://api.example.com/v1/things/1"])
        #expect(result == ["n": "https://api.example.com/v1/things/1".count])
    }
}
