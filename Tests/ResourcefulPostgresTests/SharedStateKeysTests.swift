import Resourceful
import Testing

@testable import ResourcefulPostgres

/// Sealing rows: a rotated key still opens old rows; a row opens only as itself.
struct SharedStateKeysTests {
    static let old = Array(repeating: UInt8(1), count: 32)
    static let new = Array(repeating: UInt8(2), count: 32)

    @Test("A row sealed under the previous key opens after the rotation; new rows take the new key")
    func aRotatedKeyStillOpensOldRows() throws {
        let before = try SharedStateKeys(current: "a", keys: ["a": Self.old])
        let sealed = try before.seal(Array("Bearer t0ken".utf8), context: "row 1")
        #expect(sealed.keyID == "a")
        #expect(!sealed.sealed.contains(subsequence: Array("t0ken".utf8)))
        let after = try SharedStateKeys(current: "b", keys: ["a": Self.old, "b": Self.new])
        #expect(after.open(sealed.sealed, keyID: "a", context: "row 1") == Array("Bearer t0ken".utf8))
        #expect(try after.seal([1], context: "row 1").keyID == "b")
    }

    @Test("A sealed value copied to another row, altered, or under an unknown key does not open")
    func aRowOpensOnlyAsItself() throws {
        let keys = try SharedStateKeys(current: "a", keys: ["a": Self.old])
        var sealed = try keys.seal(Array("secret".utf8), context: "row 1").sealed
        #expect(keys.open(sealed, keyID: "a", context: "row 2") == nil)
        #expect(keys.open(sealed, keyID: "z", context: "row 1") == nil)
        sealed[sealed.count - 1] ^= 1
        #expect(keys.open(sealed, keyID: "a", context: "row 1") == nil)
    }

    @Test("Short keys and a current id naming no key are refused, without the key in the message")
    func badKeysAreRefused() {
        #expect(throws: SharedStateKeys.Invalid.self) { try SharedStateKeys(current: "a", keys: ["a": Array(repeating: 7, count: 16)]) }
        #expect(throws: SharedStateKeys.Invalid.self) { try SharedStateKeys(current: "b", keys: ["a": Self.old]) }
        #expect(throws: SharedStateKeys.Invalid.self) { try SharedStateKeys(current: "", keys: ["": Self.old]) }
    }

    @Test("Instances with the same keys file credentials under the same cache digest")
    func theCacheDigestKeyIsTheFleets() throws {
        let one = try SharedStateKeys(current: "a", keys: ["a": Self.old])
        let two = try SharedStateKeys(current: "a", keys: ["a": Self.old])
        let other = try SharedStateKeys(current: "a", keys: ["a": Self.new])
        #expect(one.cacheDigestKey.bytes == two.cacheDigestKey.bytes)
        #expect(one.cacheDigestKey.bytes != other.cacheDigestKey.bytes)
    }
}

extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { Array(self[$0..<($0 + subsequence.count)]) == subsequence }
    }
}
