import Foundation
import Logging
import Resourceful
import Testing

@Suite struct CallContextTests {
    static func context() -> CallContext {
        var config = APIConfig(baseURL: URL(string: "https://api.example.com")!, service: "svc")
        config.retry.maxAttempts = 4
        let options = RequestOptions(config: config, requestEncoder: JSONEncoder(), responseDecoder: JSONDecoder())
        return CallContext(
            requestID: "0123456789abcdef", verb: .show,
            target: RequestTarget(origin: "https://api.example.com", path: "users/1"), pathTemplate: "users/{}",
            options: options, logger: Logger(label: "test")
        )
    }

    @Test func copiesAreIndependentValues() {
        let original = Self.context()
        var copy = original
        copy.attempt = 2
        copy.target.query = [.init(name: "page", value: "2")]
        copy.options.timeout = .seconds(7)
        copy.options.retryPolicy.maxAttempts = 1
        #expect(original.attempt == 1)
        #expect(original.target.query.isEmpty)
        #expect(original.options.timeout == .seconds(30))
        #expect(original.options.retryPolicy.maxAttempts == 4)
        #expect(copy.attempt == 2)
        #expect(copy.target.encodedQuery == "page=2")
        #expect(copy.options.timeout == .seconds(7))
        #expect(copy.options.retryPolicy.maxAttempts == 1)
        // Fields not changed are carried over.
        #expect(copy.requestID == original.requestID)
        #expect(copy.pathTemplate == "users/{}")
    }

    @Test func theRetryPolicyDefaultsToTheConfigurations() {
        let context = Self.context()
        #expect(context.options.retryPolicy.maxAttempts == 4)
        #expect(context.options.allowsRetries)
        #expect(context.attempt == 1)
    }
}
