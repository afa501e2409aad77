import Foundation

extension Redactor {
    /// Authentication schemes (RFC 9110 §11, and those in common use) whose credential follows
    /// the scheme's name after a space: `Bearer …`, `Basic …`, `DPoP …`, `Negotiate …`.
    static let credentialSchemes: Set<String> = [
        "bearer", "basic", "dpop", "gnap", "negotiate", "ntlm", "kerberos", "apikey", "api-key", "sso-key", "privatetoken",
    ]
    /// Schemes counted only as the first word of a header field's value (`token ghp_…`, as
    /// GitHub and Django read an `Authorization` field): elsewhere the word is prose.
    static let leadingCredentialSchemes: Set<String> = ["token"]

    /// A header field's value that is not masked as a whole, as it may be shown: a JSON document
    /// masked as JSON; otherwise every URL in it masked (``maskedURLs(in:)``), the credential after
    /// an authentication scheme replaced (`X-Upstream: Bearer ***`), the values of masked names in
    /// `name=value` pairs (`a=1; password=***`, `password=***&x=1`, quoted values too) replaced;
    /// and the whole value replaced by `***` when it still gives a masked name a value in a way
    /// these rules do not mask pair by pair (`"password": "…"` that is not JSON), so that it is
    /// never shown as it is. Values that give no secret (`max-age=60`, `<…>; rel="next"`,
    /// `Bearer realm="api", error="invalid_token"`) stay readable.
    func maskedFieldValue(_ value: String) -> String {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let first = trimmed.first, first == "{" || first == "[" {
            let document = Data(trimmed.utf8)
            if let masked = maskedJSONDocument(document) { return masked == document ? value : String(decoding: masked, as: UTF8.self) }
        }
        var shown = maskedURLs(in: value)
        shown = maskedSchemeCredentials(in: shown, leading: Self.leadingCredentialSchemes)
        shown = maskedParameters(in: shown)
        return givesAMaskedNameAValue(shown) ? Self.mask : shown
    }

    /// `text` with the credential after each authentication scheme's name replaced
    /// (``credentialSchemes``: `Bearer abc` → `Bearer ***`, whatever the case of the scheme;
    /// those of `leading` only as the first word). The credential is the run of characters after
    /// the spaces that follow the name, up to a space or a comma; a run of `name=value`
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
            guard (3...13).contains(index - start), index < bytes.count,
                bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t")
            else { continue }
            let word = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self).lowercased()
            guard Self.credentialSchemes.contains(word) || (start == firstWord && leading.contains(word)) else { continue }
            var credentialStart = index
            while credentialStart < bytes.count, bytes[credentialStart] == UInt8(ascii: " ") || bytes[credentialStart] == UInt8(ascii: "\t")
            {
                credentialStart += 1
            }
            var end = credentialStart
            while end < bytes.count, !Self.endsCredential(bytes[end]) { end += 1 }
            let credential = bytes[credentialStart..<end]
            guard !credential.isEmpty, credential.first != UInt8(ascii: "*"), !Self.isParameter(credential) else { continue }
            result.append(contentsOf: bytes[copied..<credentialStart])
            result.append(contentsOf: Self.mask.utf8)
            copied = end
            index = end
        }
        guard copied > 0 else { return nil }
        result.append(contentsOf: bytes[copied...])
        return String(decoding: result, as: UTF8.self)
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
    /// the name is the run of name characters before the `=` (``isNameScalar(_:)``), the value
    /// runs to the next `;`, `,`, `&`, space, `>`, `)` or quote, or, when it starts with a quote,
    /// to its closing quote (`password="a b"`).
    func maskedParameters(in text: String) -> String {
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
            guard nameStart < equals, nameStart >= copied,
                isMasked(formName: String(String.UnicodeScalarView(scalars[nameStart..<equals])))
            else { continue }
            var end = index
            if end < scalars.count, scalars[end] == "\"" || scalars[end] == "'" {
                let quote = scalars[end]
                end += 1
                while end < scalars.count, scalars[end] != quote {
                    end += scalars[end] == "\\" ? 2 : 1
                }
                end = min(end + 1, scalars.count)
            } else {
                while end < scalars.count, !";,& \t>)\"'".unicodeScalars.contains(scalars[end]) { end += 1 }
            }
            let value = scalars[index..<end]
            guard !value.isEmpty, !value.elementsEqual(Self.mask.unicodeScalars) else { continue }
            result.append(contentsOf: scalars[copied..<index])
            result.append(contentsOf: Self.mask.unicodeScalars)
            copied = end
            index = end
        }
        guard copied > 0 else { return text }
        result.append(contentsOf: scalars[copied...])
        return String(result)
    }
}
