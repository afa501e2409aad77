import Crypto
import Foundation
public import Resourceful

/// The keys rows holding secrets are sealed with (AES-256-GCM), each named by an id kept beside
/// the row, so that rows sealed under an earlier key are still read after a rotation.
///
/// New rows are sealed with the current key; a row is opened with the key its id names, and a
/// row whose key is not among these is treated as absent (never an error holding its bytes). The
/// same key material gives the fleet one ``HTTPCacheDigestKey`` (derived with HKDF), so that every
/// instance files a credential's cached answers under the same digest.
///
/// ```swift
/// let keys = try SharedStateKeys(current: "2026-11", keys: ["2026-11": newKey, "2026-05": oldKey])
/// ```
public struct SharedStateKeys: Sendable {
    /// A key that cannot seal rows: shorter than 32 bytes, or an id that is empty, longer than 64
    /// bytes or not among the keys.
    public struct Invalid: Error, Sendable, CustomStringConvertible {
        /// What is wrong, without the key.
        public let description: String
    }

    /// The id of the key new rows are sealed with.
    package let currentID: String
    private let keys: [String: SymmetricKey]

    /// Keys by id (each 32 bytes or more; 32 are used), sealing new rows with `current`'s.
    public init(current: String, keys: [String: [UInt8]]) throws(Invalid) {
        for id in keys.keys where id.isEmpty || id.utf8.count > 64 {
            throw Invalid(description: "a key id must have 1 to 64 bytes")
        }
        guard keys[current] != nil else { throw Invalid(description: "the current key id '\(current)' names none of the keys given") }
        var made: [String: SymmetricKey] = [:]
        for (id, bytes) in keys {
            guard bytes.count >= 32 else { throw Invalid(description: "the key '\(id)' has \(bytes.count) bytes; 32 are needed") }
            made[id] = SymmetricKey(data: bytes.prefix(32))
        }
        currentID = current
        self.keys = made
    }

    /// Seals `plaintext` with the current key, bound to `context` (the row's own key, so that a
    /// sealed value copied into another row does not open there).
    func seal(_ plaintext: [UInt8], context: String) throws -> (keyID: String, sealed: [UInt8]) {
        // The current id is among the keys: the initializer checks it.
        guard let key = keys[currentID] else { throw Invalid(description: "no current key") }
        let box = try AES.GCM.seal(plaintext, using: key, authenticating: Array(context.utf8))
        guard let combined = box.combined else { throw Invalid(description: "the sealed value could not be combined") }
        return (currentID, Array(combined))
    }

    /// Opens a row sealed under `keyID` for `context`; `nil` when the key is unknown or the row
    /// does not open (altered, or sealed for another row).
    func open(_ sealed: [UInt8], keyID: String, context: String) -> [UInt8]? {
        guard let key = keys[keyID], let box = try? AES.GCM.SealedBox(combined: sealed),
            let plaintext = try? AES.GCM.open(box, using: key, authenticating: Array(context.utf8))
        else { return nil }
        return Array(plaintext)
    }

    /// The digest key every instance files credentialed cache entries under: derived from the
    /// current key, so that instances with the same keys agree.
    public var cacheDigestKey: HTTPCacheDigestKey {
        // A derived key is 32 bytes, as the digest key requires: it cannot be too short.
        let derived = keys[currentID].map {
            HKDF<SHA256>.deriveKey(inputKeyMaterial: $0, info: Array("resourceful http cache digest".utf8), outputByteCount: 32)
        }
        let bytes = derived?.withUnsafeBytes { Array($0) } ?? []
        return (try? HTTPCacheDigestKey(bytes: bytes)) ?? .processWide
    }

    /// The most bytes of a sealed token read from a row (1 MiB, far above any token): a larger
    /// row was not written by an instance, and is read as holding none, without its bytes.
    static let largestSealedSecret: Int64 = 1 << 20

    /// A row's name for `text` (SHA-256, hex): the same under every key, so that a rotation
    /// finds the rows sealed before it. What is named so is no secret (a token endpoint, client
    /// and scopes; a cache key, whose credential part is already a keyed digest).
    static func name(_ text: String) -> String {
        SHA256.hash(data: Array(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
