import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

@Suite struct UserAgentTests {
    @Test func resourcefulNamesItselfUnlessTheConfigurationOrRequestDoes() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/x", .status(.noContent))
            _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x"))
            let sent = try #require(harness.server.requests.last?.headerFields[.userAgent])
            #expect(sent.hasPrefix("Resourceful/"))
            #expect(sent.split(separator: "/").last?.split(separator: ".").count == 3)
            _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x", headers: ["User-Agent": "mine/2"]))
            #expect(harness.server.requests.last?.headerFields[.userAgent] == "mine/2")
            harness.dependencies.apiConfig.baseHeaders = ["user-agent": "configured/1"]
            _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x"))
            #expect(harness.server.requests.last?.headerFields[.userAgent] == "configured/1")
        }
    }
}
