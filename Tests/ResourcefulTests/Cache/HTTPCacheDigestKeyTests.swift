import Foundation
import HTTPTypes
@testable import Resourceful
import Testing

/// Credentials are filed in the cache under keyed digests (HMAC-SHA256): nobody who reads a
/// shared store can try a dictionary of `Basic base64(user:password)` values against them
/// without the key.
@Suite struct HTTPCacheDigestKeyTests {
    static let redactor = Redactor(settings: APIConfig.LogSettings())
    static let credential = "Basic " + Data("alice:correct-horse".utf8).base64EncodedString()
    static let target = RequestTarget(parsing: "https://h.example/items")

    static func key(_ byte: UInt8) throws -> HTTPCacheDigestKey {
        try HTTPCacheDigestKey(bytes: [UInt8](repeating: byte, count: 32))
    }

    @Test func theSameCredentialUnderTwoKeysGivesDifferentDigests() throws {
        let fields: HTTPFields = [.authorization: Self.credential]
        let one = CacheKey(target: Self.target, headerFields: fields, redactor: Self.redactor, digestKey: try Self.key(1))
        let again = CacheKey(target: Self.target, headerFields: fields, redactor: Self.redactor, digestKey: try Self.key(1))
        let other = CacheKey(target: Self.target, headerFields: fields, redactor: Self.redactor, digestKey: try Self.key(2))
        let random = CacheKey(target: Self.target, headerFields: fields, redactor: Self.redactor, digestKey: .random())
        #expect(one.storageKey == again.storageKey, "one key files one credential in one place")
        #expect(Set([one.storageKey, other.storageKey, random.storageKey]).count == 3)
        #expect(one.storageKey.hasPrefix("https://h.example/items credential:hmac-sha256:"))

        let vary = CachePolicy.values(of: ["authorization"], in: fields, redactor: Self.redactor, digestKey: try Self.key(1))
        let varyOther = CachePolicy.values(of: ["authorization"], in: fields, redactor: Self.redactor, digestKey: try Self.key(2))
        #expect(vary["authorization"] != varyOther["authorization"])
        let value = try #require(vary["authorization"])
        #expect(value.hasPrefix("hmac-sha256:") && value.utf8.count == 12 + 64)
    }

    /// What an attacker who reads the store would compute: the plain SHA-256 of the credential
    /// (the old digest) matches nothing stored.
    @Test func noStoredDigestIsTheUnkeyedHashOfTheCredential() throws {
        let fields: HTTPFields = [.authorization: Self.credential]
        // `printf %s 'Basic YWxpY2U6Y29ycmVjdC1ob3JzZQ==' | sha256sum`
        let unkeyed = "ae998c50dc65ad53d0cb6279d7b05e886083223b52d1238e1823a3152675aee3"
        let key = CacheKey(target: Self.target, headerFields: fields, redactor: Self.redactor)
        let vary = CachePolicy.values(of: ["authorization"], in: fields, redactor: Self.redactor)
        for text in [key.storageKey, key.anonymousKey, vary["authorization"] ?? ""] {
            #expect(!text.contains(unkeyed))
            #expect(!text.contains("correct-horse") && !text.contains(Self.credential))
        }
    }

    @Test func theKeyMaterialNeverHoldsTheCredential() throws {
        let keys = [HTTPCacheDigestKey.processWide, .random(), .random()]
        for digestKey in keys {
            let material = digestKey.bytes
            #expect(material.count == 32)
            #expect(!Data(material).contains(Data(Self.credential.utf8)))
        }
        #expect(keys[1].bytes != keys[2].bytes, "each random key is its own")
    }

    @Test func aKeyOfTooFewBytesIsRefusedWithoutShowingThem() {
        let error = #expect(throws: HTTPCacheDigestKey.TooShort.self) { try HTTPCacheDigestKey(bytes: Array("short-secret".utf8)) }
        #expect(error?.byteCount == 12)
        #expect(error.map { !String(describing: $0).contains("short-secret") } ?? false)
    }
}
