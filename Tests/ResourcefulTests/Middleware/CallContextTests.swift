import Foundation
import Logging
import Resourceful
import Testing

@Suite struct CallContextTests {
    static func context() -> CallContext {
        var config = APIConfig(baseURL: URL(string: "https://api.example.com")!, service: "svc")
        config.retry.maxAttempts = 4
        return CallContext(
            requestID: "0123456789abcdef", verb: .show, path: "users/1", pathTemplate: "users/{}",
            logger: Logger(label: "test"), config: config
        )
    }

    @Test func copiesAreIndependentValues() {
        let original = Self.context()
        var copy = original
        copy.attempt = 2
        copy.query = "page=2"
        copy.config.service = "other"
        copy.retryPolicy.maxAttempts = 1
        #expect(original.attempt == 1)
        #expect(original.query == "")
        #expect(original.config.service == "svc")
        #expect(original.retryPolicy.maxAttempts == 4)
        #expect(copy.attempt == 2)
        #expect(copy.query == "page=2")
        #expect(copy.config.service == "other")
        #expect(copy.retryPolicy.maxAttempts == 1)
        // Fields not changed are carried over.
        #expect(copy.requestID == original.requestID)
        #expect(copy.pathTemplate == "users/{}")
    }

    @Test func theRetryPolicyDefaultsToTheConfigurations() {
        let context = Self.context()
        #expect(context.retryPolicy.maxAttempts == 4)
        #expect(context.allowsRetries)
        #expect(context.attempt == 1)
    }
}
