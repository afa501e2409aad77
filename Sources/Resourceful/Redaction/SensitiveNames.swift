/// The rule that says whether a header, JSON key, query or form field holds a secret, shared by
/// the logging step (which masks such values) and the redirect step (which drops such headers
/// before another origin).
///
/// Names are compared normalised: lower-cased, with `_`, `-`, `.` and spaces left out, so
/// `access_token`, `accessToken`, `Access-Token` and `access.token` are one name. A name is
/// sensitive when its normalised form ends with a listed name (`token` covers `accessToken`,
/// `X-Auth-Token` and `refresh_token`; `apiKey` covers `X-Api-Key` and `api_key`), or equals one of
/// a few short names matched exactly (`key`, `sig`, `otp`, `pin`, `pass`, `auth`). Keys that are
/// secrets are named by their kind (`secretKey`, `signingKey`, `accessKey`, `privateKey`,
/// `encryptionKey`, `masterKey`, `clientKey`, `apiKey`), so `sortKey`, `primaryKey`, `publicKey`
/// and `idempotencyKey` stay readable.
package struct SensitiveNames: Sendable {
    /// Matched as suffixes whatever the configuration says.
    static let builtIn = [
        "authorization", "cookie", "password", "passwd", "passphrase", "passcode", "pwd", "secret", "token", "apiKey",
        "privateKey", "secretKey", "signingKey", "accessKey", "encryptionKey", "masterKey", "clientKey", "session",
        "sessionId", "credential", "credentials", "signature", "jwt", "assertion", "codeVerifier",
        "authentication", "authKey", "subscriptionKey", "functionsKey", "deviceCode", "userCode", "authorizationCode",
    ]
    /// Short names matched only whole, since as suffixes they would hide ordinary fields
    /// (`pass` ends `bypass` and `compass`; `key` ends `sortKey` and `primaryKey`).
    static let exact: Set<String> = ["key", "sig", "otp", "pin", "pass", "auth"]

    private let suffixes: [[UInt8]]

    /// The built-in names and `extra` ones (configured headers and keys).
    package init(extra: [String] = []) {
        var seen: Set<[UInt8]> = []
        var suffixes: [[UInt8]] = []
        for name in Self.builtIn + extra {
            let normalised = Self.normalise(name)
            guard !normalised.isEmpty, seen.insert(normalised).inserted else { continue }
            suffixes.append(normalised)
        }
        self.suffixes = suffixes
    }

    /// Whether `name` holds a secret.
    package func contains(_ name: some StringProtocol) -> Bool {
        let normalised = Self.normalise(name)
        guard !normalised.isEmpty else { return false }
        if normalised.count <= 4, Self.exact.contains(String(decoding: normalised, as: UTF8.self)) { return true }
        for suffix in suffixes where normalised.count >= suffix.count {
            if normalised.suffix(suffix.count).elementsEqual(suffix) { return true }
        }
        return false
    }

    /// `name`'s UTF-8 bytes, ASCII lower-cased, without `_`, `-`, `.`, spaces and invisible
    /// characters (a byte order mark or a zero-width space some parsers drop from a key).
    static func normalise(_ name: some StringProtocol) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(name.utf8.count)
        for byte in name.utf8 {
            switch byte {
            case UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: " "): continue
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): bytes.append(byte + 32)
            case 0x80...: return normaliseScalars(name)
            default: bytes.append(byte)
            }
        }
        return bytes
    }

    /// ``normalise(_:)`` for a name beyond ASCII: invisible characters are left out too.
    private static func normaliseScalars(_ name: some StringProtocol) -> [UInt8] {
        var kept = String.UnicodeScalarView()
        for scalar in name.unicodeScalars where !scalar.properties.isDefaultIgnorableCodePoint {
            switch scalar {
            case "_", "-", ".", " ": continue
            case "A"..."Z": kept.append(Unicode.Scalar(UInt8(scalar.value + 32)))
            default: kept.append(scalar)
            }
        }
        return Array(String(kept).utf8)
    }
}
