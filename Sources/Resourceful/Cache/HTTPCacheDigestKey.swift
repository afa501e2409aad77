import Crypto
import Foundation

/// The secret key of the digests ``HTTPCacheMiddleware`` files credentials under (HMAC-SHA256):
/// in its storage keys (`… credential:hmac-sha256:…`) and in the values of `Vary` fields that
/// can carry a credential (``HTTPCacheEntry/varyingFields``).
///
/// A digest without a key could be attacked from the store: whoever reads a shared cache could
/// hash `Basic base64(user:password)` for every word of a dictionary and find the one that gives
/// a stored digest. With a key they cannot compute a single digest.
///
/// By default (``processWide``) the key is 32 random bytes made when the process first needs
/// them, never written anywhere: digests made with it mean nothing to another process or after
/// a restart, so an entry stored by one process is a miss for every other. That is the right
/// choice for a cache in memory. A fleet that shares a persistent store (a database) and wants
/// its instances to share answers gives each instance the same key, read from a secret, with
/// ``init(bytes:)``; anyone who holds that key can attack the digests again, so keep it as
/// secret as the credentials themselves.
public struct HTTPCacheDigestKey: Sendable {
    /// The fewest bytes a key may have: as many as the digest's (RFC 2104 §3).
    public static let minimumByteCount = 32

    /// Why bytes were not taken as a key: there were too few of them.
    public struct TooShort: Error, Sendable, CustomStringConvertible {
        /// How many bytes were given.
        public let byteCount: Int

        /// Says how many bytes were given and how many are needed, never the bytes.
        public var description: String {
            "an HTTP cache digest key needs at least \(HTTPCacheDigestKey.minimumByteCount) bytes, not \(byteCount)"
        }
    }

    let key: SymmetricKey

    /// The key of this process: 32 bytes from the system's secure random generator, made once,
    /// held in memory only. Digests made with it are meaningless to any other process.
    public static let processWide = HTTPCacheDigestKey(key: SymmetricKey(size: .bits256))

    /// A key of `bytes`, for instances that share a store and must find each other's entries:
    /// at least ``minimumByteCount`` random bytes, the same on every instance, kept secret.
    ///
    /// - Throws: ``TooShort`` when `bytes` holds fewer than ``minimumByteCount`` bytes.
    public init(bytes: some Collection<UInt8>) throws(TooShort) {
        guard bytes.count >= Self.minimumByteCount else { throw TooShort(byteCount: bytes.count) }
        key = SymmetricKey(data: Array(bytes))
    }

    /// A new random key, as ``processWide`` is.
    public static func random() -> HTTPCacheDigestKey {
        HTTPCacheDigestKey(key: SymmetricKey(size: .bits256))
    }

    /// The key's bytes, to check what it holds; never logged or stored.
    package var bytes: [UInt8] { key.withUnsafeBytes { Array($0) } }

    private init(key: SymmetricKey) {
        self.key = key
    }

    /// The HMAC-SHA256 of `parts`, each prefixed by its length (so that no two lists of parts
    /// give the same bytes), in 64 lower-case hex digits.
    func digest(_ parts: some Sequence<String>) -> String {
        var mac = HMAC<SHA256>(key: key)
        for part in parts {
            mac.update(data: Data("\(part.utf8.count):".utf8))
            mac.update(data: Data(part.utf8))
        }
        return Self.hex(mac.finalize())
    }

    /// The HMAC-SHA256 of `text`'s UTF-8 bytes, in 64 lower-case hex digits.
    func digest(_ text: String) -> String {
        var mac = HMAC<SHA256>(key: key)
        mac.update(data: Data(text.utf8))
        return Self.hex(mac.finalize())
    }

    private static func hex(_ code: HMAC<SHA256>.MAC) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in code {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
