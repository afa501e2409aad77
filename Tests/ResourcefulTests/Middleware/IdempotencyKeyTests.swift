import Foundation
@testable import Resourceful
import Testing

@Suite struct IdempotencyKeyTests {
    @Test func keysAreVersion4UUIDs() throws {
        for _ in 0..<1_000 {
            let key = RetryMiddleware.makeIdempotencyKey()
            let uuid = try #require(UUID(uuidString: key), "\(key)")
            // The same text back: 36 upper-case characters with dashes in the usual places.
            #expect(uuid.uuidString == key)
            let bytes = uuid.uuid
            #expect(bytes.6 >> 4 == 4, "version")
            #expect(bytes.8 >> 6 == 0b10, "variant")
        }
    }

    @Test func keysDoNotRepeat() {
        let keys = (0..<20_000).map { _ in RetryMiddleware.makeIdempotencyKey() }
        #expect(Set(keys).count == keys.count)
    }
}
