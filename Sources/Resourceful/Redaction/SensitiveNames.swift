/// The rule that says whether a header, JSON key, query or form field holds a secret, shared by
/// the logging step (which masks such values), recordings, cURL exports, the HTTP cache (which
/// files answers under a digest of such values) and the redirect step (which drops such headers
/// before another origin).
///
/// A name is read two ways, and is sensitive when either says so:
///
/// - **Normalised:** lower-cased, with `_`, `-`, `.` and spaces left out, so `access_token`,
///   `accessToken`, `Access-Token` and `access.token` are one name. It is sensitive when it ends
///   with a listed name (`token` covers `accessToken`, `X-Auth-Token` and `refresh_token`; `apiKey`
///   covers `X-Api-Key` and `api_key`), or equals one of a few short names matched exactly (`key`,
///   `sig`, `otp`, `pin`, `pass`, `auth`, `pat`: a personal access token).
/// - **As words:** split at `_`, `-`, `.`, spaces, brackets and camel-case humps (`userPass` is
///   `user pass`, `APIKey` is `api key`). It is sensitive when its last word is a word for a
///   secret (`pass`, `key`, `auth`, `bearer`, `secret`, `token`, `pwd`, `pin`, `otp`, `sig`…), so
///   `db_pass`, `smtp_pass`, `userPass`, `stripe_key`, `X-Auth` and `X-Key` are masked, or when any
///   word is `password`, `passwd` or `passphrase` (`password_confirmation`). Words that only say
///   what form a secret takes (``valueWords``: `value`, `data`, `pem`, `base`, `material`,
///   `string`, `binary`, `header`, `hint`…, and numbers) do not count as the last word:
///   `token_value`, `SecretString`, `SECRET_KEY_BASE`, `privateKeyPem`, `key_material` and
///   `SENDGRID_API_KEY_2` are masked; nor do words that say which value of a kind it is
///   (``qualifiers``: `old`, `new`, `live`, `test`, `encrypted`…, and versions such as `v2`), so
///   `api_key_old`, `secret_key_live` and `accessTokenV2` are masked, and a number ending a word
///   leaves the word (`password2`, `clientSecret2`, `X-Api-Token2`). A last word `code` after a word for a secret or a one-time
///   code (``codeWords``: `otp_code`, `mfa_code`, `pin_code`) is masked; `country_code`,
///   `error_code` and `keyCode` stay readable.
///
/// A plural says what its singular says, read either way: `passwords`, `secrets`, `tokens`,
/// `apiKeys`, `refresh_tokens`, `passphrases`, `cookies`, `X-Api-Keys` are masked.
///
/// An identifier is not a secret: `key_id`, `private_key_id` and `SECRET_KEY_ID` stay readable.
/// `connection_string` (it holds the database password) and `webhook_url` (a Slack or Discord
/// webhook's address is its own credential) are masked whole.
///
/// Words only count whole: `keyboard`, `monkey`, `passenger`, `passport`, `bypass`, `author` and
/// `tokenizer` stay readable. A last word `key` or `pass` after a word that names an ordinary kind
/// of key or pass stays readable: `sortKey`, `primary_key`, `publicKey`, `partition_key`,
/// `idempotencyKey`, `cache_key`, `boarding_pass`… (``readableKeyKinds``, ``readablePassKinds``).
/// Any other `…_key` is taken for a secret (a vendor's name such as `stripe_key` says nothing of
/// its kind): masking an ordinary value costs a log line's detail, missing a secret leaks it.
///
/// Header names are read more widely (``isSensitiveHeader(_:)``): any word for a secret anywhere
/// in the name (`X-Auth-User`, `X-Api-Key-Id`, `X-Session-Id`), since a header carrying one must
/// not reach another origin. `X-Pw` is masked (`pw` is a word for a password); a name that only
/// a service gives a secret's meaning (`X-Honeycomb-Team`, `X-Access`) is not, since
/// `Access-Control-Allow-Origin` and the like must stay: configure such names
/// (`logging.maskedHeaders`, `http.redirects.sensitiveHeaders`).
package struct SensitiveNames: Sendable {
    /// Matched as suffixes whatever the configuration says.
    static let builtIn = [
        "authorization", "cookie", "password", "passwd", "passphrase", "passcode", "pwd", "secret", "token", "apiKey",
        "privateKey", "secretKey", "signingKey", "accessKey", "encryptionKey", "masterKey", "clientKey", "session",
        "sessionId", "credential", "credentials", "signature", "jwt", "assertion", "codeVerifier",
        "authentication", "authKey", "subscriptionKey", "functionsKey", "deviceCode", "userCode", "authorizationCode", "authCode",
        "connectionString", "webhookUrl", "dpop", "jfrogArtApi",
    ]
    /// Short names matched only whole, since as suffixes they would hide ordinary fields
    /// (`pass` ends `bypass` and `compass`; `key` ends `sortKey` and `primaryKey`).
    static let exact: Set<String> = ["key", "sig", "otp", "pin", "pass", "auth", "pat"]

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

    /// Words that make a name sensitive when they are its last word.
    static let lastWords: Set<String> = [
        "pass", "key", "auth", "bearer", "secret", "token", "pwd", "pin", "otp", "sig", "password", "passwd", "passphrase",
        "passcode", "cookie", "credential", "credentials", "signature", "jwt", "apikey", "authorization", "authentication",
        "pw", "creds", "totp", "hotp", "pat",
    ]
    /// Words that say what form a secret takes: after a word for a secret they leave it the last
    /// word that counts (`token_value`, `SecretString`, `privateKeyPem`).
    static let valueWords: Set<String> = [
        "value", "values", "data", "pem", "der", "base", "material", "string", "binary", "header", "hint", "b64", "base64",
        "hex", "bytes", "raw", "text", "str", "blob",
    ]
    /// Words that make a last word `code` a secret (`mfa_code`, `verification_code`), besides the
    /// words for a secret other than `key` (`keyCode` is a key on a keyboard).
    static let codeWords: Set<String> = [
        "mfa", "2fa", "sms", "verification", "recovery", "backup", "security", "access", "login", "reset", "activation",
    ]
    /// Words that make a name sensitive wherever they stand (`password_confirmation`).
    static let anyWords: Set<String> = ["password", "passwd", "passphrase"]
    /// Words that make a header name sensitive wherever they stand (`X-Auth-User`).
    static let headerWords: Set<String> = lastWords.union(["session", "sessionid", "sid"])
    /// Kinds of keys that are not secrets: a last word `key` after one of them stays readable.
    static let readableKeyKinds: Set<String> = [
        "sort", "sorting", "primary", "public", "foreign", "partition", "idempotency", "cache", "range", "hash", "row",
        "object", "lookup", "dedup", "dedupe", "deduplication", "group", "routing", "unique", "composite", "natural",
        "surrogate", "search", "map", "index", "shard", "cursor", "translation", "message", "label", "field",
        "attribute", "property", "column", "entity", "item", "short", "hot", "dictionary", "order", "join", "evaluated",
        "start", "i18n", "locale", "template", "musical", "sharding", "bucket", "storage", "file", "resource",
    ]
    /// Kinds of passes that are not secrets: a last word `pass` after one of them stays readable.
    static let readablePassKinds: Set<String> = [
        "boarding", "day", "season", "bus", "ski", "hall", "free", "backstage", "render", "first", "second",
    ]

    /// Whether `name` holds a secret.
    package func contains(_ name: some StringProtocol) -> Bool {
        let normalised = Self.normalise(name)
        if Self.singulars(ofNormalised: normalised).contains(where: matchesNormalised) { return true }
        guard Self.mayHoldAWord(normalised) else { return false }
        let spelled = Self.words(of: name)
        guard !spelled.isEmpty else { return false }
        // `password2`, `token1`: a number after a word leaves the word; `secrets`, `apiKeys`:
        // a plural says what its singular says.
        let words = spelled.map { Self.singular(of: Self.withoutTrailingNumber($0)) }
        if words.contains(where: Self.anyWords.contains) { return true }
        // The last word that says more than the form the value takes or which one it is.
        var last = words.count - 1
        while last > 0, Self.isValueWord(spelled[last]) || Self.isQualifier(spelled[last]) { last -= 1 }
        if Self.lastWords.contains(words[last]) && !Self.isReadableKind(words, at: last) { return true }
        if words[last] == "code", last > 0 {
            let before = words[last - 1]
            return Self.codeWords.contains(before) || (Self.lastWords.contains(before) && before != "key")
        }
        return false
    }

    /// Whether `word` only says what form a value takes (``valueWords``) or is a number.
    private static func isValueWord(_ word: String) -> Bool {
        valueWords.contains(word) || word.allSatisfy(\.isNumber)
    }

    /// Words that only say which of several values of one kind a name holds: after a word for a
    /// secret they leave it the last word that counts (`api_key_old`, `secret_key_live`,
    /// `accessTokenV2`, `access_token_encrypted`).
    static let qualifiers: Set<String> = [
        "old", "new", "live", "test", "prev", "previous", "next", "current", "curr", "encrypted", "enc", "prod",
        "production", "staging", "stage", "dev", "sandbox", "temp", "tmp", "legacy", "rotated", "pending", "alt",
        "fallback", "primary", "secondary",
    ]

    /// Whether `word` says which value of a kind a name holds (``qualifiers``, or a version such
    /// as `v2`).
    private static func isQualifier(_ word: String) -> Bool {
        if qualifiers.contains(word) { return true }
        return word.count > 1 && word.first == "v" && word.dropFirst().allSatisfy(\.isNumber)
    }

    /// Every word a plural of ``singular(of:)`` may stand for: the words for a secret, `code`
    /// and `session`.
    private static let pluralisable: Set<String> = headerWords.union(anyWords).union(["code"])

    /// `word`'s singular when it is the plural (`-s`, `-es`, `-ies`) of a word for a secret
    /// (`secrets`, `tokens`, `passes`, `keys`, `cookies`); otherwise `word`.
    static func singular(of word: String) -> String {
        guard word.count > 2, word.last == "s", !pluralisable.contains(word) else { return word }
        let withoutS = String(word.dropLast())
        if pluralisable.contains(withoutS) { return withoutS }
        if word.hasSuffix("es"), case let withoutEs = String(word.dropLast(2)), pluralisable.contains(withoutEs) { return withoutEs }
        if word.hasSuffix("ies"), case let withY = String(word.dropLast(3)) + "y", pluralisable.contains(withY) { return withY }
        return word
    }

    /// A normalised name, and the names it may be the plural of (`apikeys` → `apikey`,
    /// `passes` → `pass`, `privacies` → `privacy`): a plural of a masked name is masked.
    private static func singulars(ofNormalised normalised: [UInt8]) -> [[UInt8]] {
        guard normalised.count > 2, normalised.last == UInt8(ascii: "s") else { return [normalised] }
        var forms = [normalised, Array(normalised.dropLast())]
        if normalised.suffix(2).elementsEqual("es".utf8) { forms.append(Array(normalised.dropLast(2))) }
        if normalised.suffix(3).elementsEqual("ies".utf8) { forms.append(Array(normalised.dropLast(3)) + [UInt8(ascii: "y")]) }
        return forms
    }

    /// `word` without the number it ends with (`password2` → `password`), unless it is all digits.
    private static func withoutTrailingNumber(_ word: String) -> String {
        let kept = word.reversed().drop(while: \.isNumber)
        return kept.isEmpty ? word : String(kept.reversed())
    }

    /// Whether a header field named `name` may carry a credential: what ``contains(_:)`` says, or
    /// any word for a secret anywhere in it (`X-Auth-User`, `X-Api-Key-Id`, `X-Session-Id`),
    /// configured names included. Such a field is masked in logs, recordings and cURL exports,
    /// makes a request credentialed for the HTTP cache, and is dropped before a redirect to
    /// another origin.
    package func isSensitiveHeader(_ name: some StringProtocol) -> Bool {
        if contains(name) { return true }
        guard Self.mayHoldAWord(Self.normalise(name)) else { return false }
        let words = Self.words(of: name).map { Self.singular(of: Self.withoutTrailingNumber($0)) }
        return words.indices.contains { Self.headerWords.contains(words[$0]) && !Self.isReadableKind(words, at: $0) }
    }

    /// Whether a header field named `name` may carry a credential by the built-in rule alone
    /// (``isSensitiveHeader(_:)`` without configured names): `Authorization`, `Cookie`,
    /// `Proxy-Authorization`, `X-Api-Key`, `X-Auth`, `X-Key`, any `…-Token`, `…-Secret`….
    package static func isSensitiveHeader(_ name: some StringProtocol) -> Bool {
        builtInRule.isSensitiveHeader(name)
    }

    /// The built-in names alone.
    private static let builtInRule = SensitiveNames()

    /// Whether the word at `index` is a `key` or `pass` after a word naming an ordinary kind.
    private static func isReadableKind(_ words: [String], at index: Int) -> Bool {
        guard index > 0 else { return false }
        switch words[index] {
        case "key": return readableKeyKinds.contains(words[index - 1])
        case "pass": return readablePassKinds.contains(words[index - 1])
        default: return false
        }
    }

    /// The stems every word of ``lastWords``, ``anyWords`` and ``headerWords`` starts with.
    private static let stems: [[UInt8]] = [
        "pass", "key", "auth", "bearer", "secret", "token", "pwd", "pin", "otp", "sig", "cookie", "credential", "jwt", "apikey", "session",
        "sid", "pw", "cred", "code", "connection", "webhook", "pat",
    ].map {
        Array($0.utf8)
    }

    /// Whether a normalised name holds one of the ``stems``: when it does not (`id`, `name`,
    /// `created_at`), no word of it is a word for a secret, and it is not split into words.
    private static func mayHoldAWord(_ normalised: [UInt8]) -> Bool {
        stems.contains { stem in
            normalised.count >= stem.count
                && (0...(normalised.count - stem.count)).contains { start in
                    normalised[start..<start + stem.count].elementsEqual(stem)
                }
        }
    }

    /// Whether the normalised name ends with a listed name or is a short exact one.
    private func matchesNormalised(_ normalised: [UInt8]) -> Bool {
        guard !normalised.isEmpty else { return false }
        if normalised.count <= 4, Self.exact.contains(String(decoding: normalised, as: UTF8.self)) { return true }
        for suffix in suffixes where normalised.count >= suffix.count {
            if normalised.suffix(suffix.count).elementsEqual(suffix) { return true }
        }
        return false
    }

    /// `name`'s words, lower-cased: split at every character that is not a letter or a digit, and
    /// at camel-case humps (`userPass` → `user pass`, `APIKey` → `api key`, `s3Key` → `s3 key`);
    /// invisible characters (a byte order mark, a zero-width space) are left out, as in
    /// ``normalise(_:)``.
    static func words(of name: some StringProtocol) -> [String] {
        var words: [String] = []
        var current = String.UnicodeScalarView()
        let scalars = Array(name.unicodeScalars.filter { !$0.properties.isDefaultIgnorableCodePoint })
        func flush() {
            if !current.isEmpty { words.append(String(current).lowercased()) }
            current = String.UnicodeScalarView()
        }
        for (index, scalar) in scalars.enumerated() {
            let properties = scalar.properties
            guard properties.isAlphabetic || properties.numericType != nil else {
                flush()
                continue
            }
            if properties.isUppercase, let previous = current.last {
                let previousIsUpper = previous.properties.isUppercase
                let nextIsLower = index + 1 < scalars.count && scalars[index + 1].properties.isLowercase
                // `userPass`: a capital after a small letter or a digit; `APIKey`: the last
                // capital of a run when a small letter follows.
                if !previousIsUpper || nextIsLower { flush() }
            }
            current.append(scalar)
        }
        flush()
        return words
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
