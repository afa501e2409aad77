import Foundation

extension Redactor {
    /// Authentication schemes (RFC 9110 §11, and those in common use) whose credential follows
    /// the scheme's name after a space: `Bearer …`, `Basic …`, `DPoP …`, `Negotiate …`.
    static let credentialSchemes: Set<String> = [
        "bearer", "basic", "dpop", "gnap", "negotiate", "ntlm", "kerberos", "apikey", "api-key", "sso-key", "privatetoken",
        "ssws",
    ]
    /// Schemes counted only as the first word of a header field's value (`token ghp_…`, as
    /// GitHub and Django read an `Authorization` field): elsewhere the word is prose.
    static let leadingCredentialSchemes: Set<String> = ["token"]

    /// Schemes whose credential a header field's value that is not a challenge may carry after
    /// the scheme's name (``maskedAfterSchemes(in:)``): those of ``credentialSchemes`` and those a
    /// field carries its credential in as parameters (`Digest`, `OAuth`, `AWS4-HMAC-SHA256`),
    /// Okta's `SSWS`, and `token` wherever it stands (`upstream token …`).
    static let fieldValueSchemes: Set<String> = credentialSchemes.union([
        "token", "ssws", "digest", "oauth", "aws4-hmac-sha256", "hoba", "mutual", "scram-sha-1", "scram-sha-256", "vapid",
        "hmac", "hmac-sha256", "signature", "jwt", "macaroon", "mac", "sharedaccesssignature", "sharedkey", "apikeyauth",
    ])
    /// Header fields that carry challenges (RFC 9110 §11.6.1, §11.7.1): their parameters
    /// (`realm`, `error`, `scope`) stay readable; a credential in one is masked by name.
    static let challengeFields: Set<String> = ["www-authenticate", "proxy-authenticate"]
    /// Parameters a `Digest` exchange carries a secret in (RFC 7616 §3.4): masked in a challenge's
    /// parameters too.
    static let digestSecretParameters: Set<String> = ["response", "cnonce"]
    /// A header field's value that is not masked as a whole, as it may be shown. Masking fails
    /// closed: the whole value is replaced by `***` whenever what it hides cannot be located with
    /// certainty.
    ///
    /// - A value that starts like JSON (`{`, `[`) is masked as JSON, and whole when it does not
    ///   parse (`{password: …}`).
    /// - Every URL in it is masked (``maskedURLs(in:)``).
    /// - In a field that is not a challenge, everything after an authentication scheme's name
    ///   (``fieldValueSchemes``: `Bearer …`, `Digest username="u", response="…"`, `SSWS …`,
    ///   `upstream token …`) is replaced, whatever white space or `:` separates them (a
    ///   no-break space too): `X-Upstream: Bearer ***`. In a challenge (`WWW-Authenticate`) the
    ///   parameters stay readable and a credential after a scheme's name is replaced.
    /// - The values of masked names in `name=value` pairs (`a=1; password=***`,
    ///   `password=***&x=1`, quoted values too) are replaced.
    /// - The whole value is replaced when it, or what it says once percent-decoded up to
    ///   ``maxDecodings`` times, still gives a masked name a value these rules did not replace
    ///   (``givesAMaskedNameAValue(_:reading:)``): after `=`, after `:` (`- password: …`,
    ///   `user=a, pass:…`), as an element's content (`<password>…</password>`), after any
    ///   separator that does not plainly end the name (`password|…`, `password,…`, `password->…`,
    ///   `password&#61;…`, `password\u003d…`, escaped JSON: `data={\"password\":\"…\"}`), or, in
    ///   a field that is not a challenge, after white space (`secret S…`, `the password is …`,
    ///   `password !…`): a field's value such as `password reset required` is replaced whole.
    ///
    /// Values that give no secret (`max-age=60`, `<…>; rel="next"`, a challenge's
    /// `Bearer realm="api", error="invalid_token"`) stay readable.
    ///
    /// With `quotesProse` (``quotedProseFields``), each quoted string is read as a text is (a word
    /// after a masked name is the next word of a sentence: `desc="Auth check"`), and the rest of
    /// the value as any field's value is.
    func maskedFieldValue(_ value: String, isChallenge: Bool = false, quotesProse: Bool = false) -> String {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let first = trimmed.first, first == "{" || first == "[" {
            let document = Data(trimmed.utf8)
            // Looks like JSON but does not parse: where a secret in it ends is not known.
            guard let masked = maskedJSONDocument(document) else { return Self.mask }
            return masked == document ? value : String(decoding: masked, as: UTF8.self)
        }
        var shown = maskedURLs(in: value)
        if isChallenge {
            shown = maskedSchemeCredentials(in: shown, leading: Self.leadingCredentialSchemes)
            shown = maskedParameters(in: shown, alsoMasking: Self.digestSecretParameters)
        } else {
            shown = maskedAfterSchemes(in: shown)
            shown = maskedParameters(in: shown)
        }
        if quotesProse, !isChallenge, let (outside, quoted) = Self.quotedStrings(of: shown) {
            let gives = givesAMaskedNameAValue(outside, reading: .fieldValue) || quoted.contains { givesAMaskedNameAValue($0) }
            return gives ? Self.mask : shown
        }
        return givesAMaskedNameAValue(shown, reading: isChallenge ? .challenge : .fieldValue) ? Self.mask : shown
    }

    /// `text` with the content of each quoted string (`"…"`, with `\` escapes) taken out
    /// (`desc="…"` → `desc=""`), and those contents; `nil` when a quoted string is not closed.
    static func quotedStrings(of text: String) -> (outside: String, quoted: [String])? {
        var outside = String.UnicodeScalarView()
        var quoted: [String] = []
        var content = String.UnicodeScalarView()
        var inQuote = false
        var escaped = false
        for scalar in text.unicodeScalars {
            guard inQuote else {
                outside.append(scalar)
                inQuote = scalar == "\""
                continue
            }
            if escaped {
                escaped = false
            } else if scalar == "\\" {
                escaped = true
            } else if scalar == "\"" {
                quoted.append(String(content))
                content.removeAll()
                outside.append(scalar)
                inQuote = false
                continue
            }
            content.append(scalar)
        }
        return inQuote ? nil : (String(outside), quoted)
    }

    /// `text` with everything after the first authentication scheme's name (``fieldValueSchemes``,
    /// whatever its case) replaced by `***`: the name is a word of its own (not inside a longer
    /// one) followed by white space of any kind or a `:`, and something other than `***`.
    func maskedAfterSchemes(in text: String) -> String {
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count {
            guard Self.isSchemeScalar(scalars[index]), index == 0 || !Self.isWordScalar(scalars[index - 1]) else {
                index += 1
                continue
            }
            let start = index
            while index < scalars.count, Self.isSchemeScalar(scalars[index]) { index += 1 }
            guard index < scalars.count, scalars[index].properties.isWhitespace || scalars[index] == ":",
                Self.fieldValueSchemes.contains(String(String.UnicodeScalarView(scalars[start..<index])).lowercased())
            else { continue }
            var credential = index
            while credential < scalars.count, scalars[credential].properties.isWhitespace || scalars[credential] == ":" {
                credential += 1
            }
            let rest = scalars[credential...]
            guard !rest.isEmpty, !rest.elementsEqual(Self.mask.unicodeScalars) else { continue }
            var result = String.UnicodeScalarView(scalars[..<credential])
            result.append(contentsOf: Self.mask.unicodeScalars)
            return String(result)
        }
        return text
    }

    /// ASCII letters, digits and `-`: the characters of a scheme's name.
    private static func isSchemeScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII && (scalar.properties.isAlphabetic || scalar.properties.numericType != nil || scalar == "-")
    }

    /// Letters and digits of any script: a scheme's name is not read inside a longer word.
    private static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isAlphabetic || scalar.properties.numericType != nil
    }

    /// `text` with every `%XX` (two hexadecimal digits) decoded, other `%` left as they are;
    /// bytes that are not UTF-8 are replaced.
    static func percentDecoded(_ text: String) -> String {
        guard text.contains("%") else { return text }
        return PercentEncoding.decode(text)
    }

    /// `text` with the credential after each authentication scheme's name replaced
    /// (``credentialSchemes``: `Bearer abc` → `Bearer ***`, whatever the case of the scheme;
    /// those of `leading` only as the first word). The credential is the run of characters after
    /// the spaces (no-break and other Unicode spaces too) that follow the name, up to a space or
    /// a comma; a run of `name=value`
    /// parameters (`Bearer realm="api"`) is not one (``maskedParameters(in:)`` masks those).
    func maskedSchemeCredentials(in text: String, leading: Set<String> = []) -> String {
        var contiguous = text
        let masked = contiguous.withUTF8 { bytes in maskedSchemeCredentials(in: bytes, leading: leading) }
        return masked ?? text
    }

    /// ``maskedSchemeCredentials(in:leading:)`` over UTF-8 bytes, in one pass (scheme names are
    /// ASCII); `nil` when there is nothing to mask.
    private func maskedSchemeCredentials(in bytes: UnsafeBufferPointer<UInt8>, leading: Set<String>) -> String? {
        var result: [UInt8] = []
        var copied = 0
        var index = 0
        var firstWord = 0
        while firstWord < bytes.count, bytes[firstWord] == UInt8(ascii: " ") || bytes[firstWord] == UInt8(ascii: "\t") { firstWord += 1 }
        while index < bytes.count {
            // A word that starts here: not after a letter, a digit or another name character.
            guard Self.isSchemeByte(bytes[index]), index == 0 || !Self.isNameByte(bytes[index - 1]) else {
                index += 1
                continue
            }
            let start = index
            while index < bytes.count, Self.isSchemeByte(bytes[index]) { index += 1 }
            guard (3...13).contains(index - start), Self.separatorLength(in: bytes, at: index) > 0 else { continue }
            let word = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self).lowercased()
            guard Self.credentialSchemes.contains(word) || (start == firstWord && leading.contains(word)) else { continue }
            var credentialStart = index
            var length = Self.separatorLength(in: bytes, at: credentialStart)
            while length > 0 {
                credentialStart += length
                length = Self.separatorLength(in: bytes, at: credentialStart)
            }
            var end = credentialStart
            while end < bytes.count, !Self.endsCredential(bytes[end]), Self.separatorLength(in: bytes, at: end) == 0 { end += 1 }
            let credential = bytes[credentialStart..<end]
            guard !credential.isEmpty, !credential.starts(with: Self.mask.utf8), !Self.isParameter(credential) else { continue }
            result.append(contentsOf: bytes[copied..<credentialStart])
            result.append(contentsOf: Self.mask.utf8)
            copied = end
            index = end
        }
        guard copied > 0 else { return nil }
        result.append(contentsOf: bytes[copied...])
        return String(decoding: result, as: UTF8.self)
    }

    /// How many bytes of white space start at `index`: a space or a tab, or a no-break or other
    /// Unicode space (U+00A0, U+2000–U+200A, U+202F, U+205F, U+3000) in UTF-8; 0 when none does.
    private static func separatorLength(in bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Int {
        guard index < bytes.count else { return 0 }
        switch bytes[index] {
        case UInt8(ascii: " "), UInt8(ascii: "\t"): return 1
        case 0xC2: return index + 1 < bytes.count && bytes[index + 1] == 0xA0 ? 2 : 0
        case 0xE2:
            guard index + 2 < bytes.count else { return 0 }
            let (second, third) = (bytes[index + 1], bytes[index + 2])
            return (second == 0x80 && ((0x80...0x8A).contains(third) || third == 0xAF)) || (second == 0x81 && third == 0x9F) ? 3 : 0
        case 0xE3: return index + 2 < bytes.count && bytes[index + 1] == 0x80 && bytes[index + 2] == 0x80 ? 3 : 0
        default: return 0
        }
    }

    /// Whether `byte` ends a credential: ASCII white space or a comma.
    private static func endsCredential(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n")
            || byte == UInt8(ascii: ",") || byte == 0x0B || byte == 0x0C
    }

    /// Whether `run` is an auth parameter (`realm="api"`, `error=x`) rather than a credential: an
    /// `=` followed by something other than `=` (a token68 credential ends with its `=` padding).
    private static func isParameter(_ run: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        guard let equals = run.firstIndex(of: UInt8(ascii: "=")) else { return false }
        return run[equals...].contains { $0 != UInt8(ascii: "=") }
    }

    /// Bytes of an authentication scheme's name: ASCII letters, digits and `-`.
    private static func isSchemeByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"):
            true
        default: false
        }
    }

    /// Whether `byte` may be part of a name (``isNameScalar(_:)``): any byte beyond ASCII counts,
    /// so that no word is read as starting inside a longer one.
    private static func isNameByte(_ byte: UInt8) -> Bool {
        byte >= 0x80 || isNameScalar(Unicode.Scalar(byte))
    }

    /// `text` with the value of every `name=value` pair whose name is masked replaced by `***`:
    /// the name is the run of name characters before the `=` (``isNameScalar(_:)``). Masking
    /// fails closed: the value (past its closing quote when it starts with one: `password="a b"`)
    /// runs to a `;`, `,` or `&` that starts the next pair (`; Path=/`, `&a=1`, `, b=2`) or to the
    /// end of the text, so that a quote, `)`, `>` or space inside a secret hides the rest of it
    /// too (`password=p)w"x` → `password=***`). Names in `extra` (lower-cased) are masked too.
    func maskedParameters(in text: String, alsoMasking extra: Set<String> = []) -> String {
        guard text.contains("=") else { return text }
        let scalars = Array(text.unicodeScalars)
        var result = String.UnicodeScalarView()
        var copied = 0
        var index = 0
        while index < scalars.count {
            guard scalars[index] == "=" else {
                index += 1
                continue
            }
            var nameStart = index
            while nameStart > 0, Self.isNameScalar(scalars[nameStart - 1]) { nameStart -= 1 }
            let equals = index
            index += 1
            let name = String(String.UnicodeScalarView(scalars[nameStart..<equals]))
            guard nameStart < equals, nameStart >= copied, isMasked(formName: name) || extra.contains(name.lowercased()) else { continue }
            var end = index
            if end < scalars.count, scalars[end] == "\"" || scalars[end] == "'" {
                let quote = scalars[end]
                end += 1
                while end < scalars.count, scalars[end] != quote {
                    end += scalars[end] == "\\" ? 2 : 1
                }
                end = min(end + 1, scalars.count)
            }
            // Fail closed: the value runs on to a separator that starts the next pair, or the end.
            while end < scalars.count, !Self.startsNextPair(scalars, at: end) { end += 1 }
            let value = scalars[index..<end]
            guard !value.isEmpty, !Self.isMaskAlready(value) else { continue }
            result.append(contentsOf: scalars[copied..<index])
            result.append(contentsOf: Self.mask.unicodeScalars)
            copied = end
            index = end
        }
        guard copied > 0 else { return text }
        result.append(contentsOf: scalars[copied...])
        return String(result)
    }

    /// Whether a `;`, `,` or `&` at `index` starts the next `name=value` pair: optional white
    /// space, name characters (``isNameScalar(_:)``), then `=`.
    static func startsNextPair(_ scalars: [Unicode.Scalar], at index: Int) -> Bool {
        guard ";,&".unicodeScalars.contains(scalars[index]) else { return false }
        var name = index + 1
        while name < scalars.count, scalars[name] == " " || scalars[name] == "\t" { name += 1 }
        var end = name
        while end < scalars.count, isNameScalar(scalars[end]) { end += 1 }
        return end > name && end < scalars.count && scalars[end] == "="
    }

    /// Whether `value` is `***` already, alone or before the one character that closes what holds
    /// it (`<https://…?token=***>; rel="next"`, `url='…?token=***'`): nothing of a secret is left.
    private static func isMaskAlready(_ value: ArraySlice<Unicode.Scalar>) -> Bool {
        guard value.starts(with: mask.unicodeScalars) else { return false }
        let rest = value.dropFirst(mask.unicodeScalars.count)
        return rest.isEmpty || (rest.count == 1 && ">\"')".unicodeScalars.contains(rest[rest.startIndex]))
    }
}
