import Foundation
import HTTPTypes
import ResourcefulTesting
import Testing

@testable import Resourceful

/// A redaction switch set by a step after the cache when the answer was stored holds for the
/// answers served from the cache: the first call is logged redacted, and so is every hit.
@Suite struct HTTPCacheHitRedactionTests {
    static let secret = "S-CACHED-5120"

    @Test func aHitKeepsTheRedactionOfTheAnswerItServes() async throws {
        try await Harness.run(authorization: nil) { harness in
            var answer = MockResponse.json(raw: #"{"note":"\#(Self.secret)"}"#)
            answer.headerFields[.cacheControl] = "max-age=600"
            harness.server.stub(.get, "/v1/items", answer)
            let redact = ChangeOptions { $0.shouldRedactResponseBody = true }
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [HTTPCacheMiddleware(), redact])
            for _ in 0..<2 {
                let value = try await api.call(AdHocRequest<[String: String], Empty>(.show, "items", parameters: Empty()))
                #expect(value == ["note": Self.secret])
            }
            #expect(harness.server.requests.count == 1)
            #expect(harness.logText.contains("resourceful.cache=hit"))
            #expect(harness.logText.components(separatedBy: "<redacted,").count == 3, "\(harness.logText)")
            #expect(!harness.logText.contains(Self.secret), "\(harness.logText)")
        }
    }

    @Test func aHitOfAnAnswerNoStepRedactedIsLoggedAsItWas() async throws {
        try await Harness.run(authorization: nil) { harness in
            var answer = MockResponse.json(raw: #"{"note":"plain-7"}"#)
            answer.headerFields[.cacheControl] = "max-age=600"
            harness.server.stub(.get, "/v1/items", answer)
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [HTTPCacheMiddleware()])
            for _ in 0..<2 { _ = try await api.call(AdHocRequest<[String: String], Empty>(.show, "items", parameters: Empty())) }
            #expect(harness.server.requests.count == 1)
            #expect(harness.logText.components(separatedBy: "plain-7").count == 3, "\(harness.logText)")
        }
    }
}
