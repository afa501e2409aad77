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
        guard text.contains(where: { $0 == " " || $0 == "\t" }) else { return text }
        let scalars = Array(text.unicodeScalars)
        var result = String.UnicodeScalarView()
        var copied = 0
        var index = 0
        let firstWord = scalars.firstIndex { $0 != " " && $0 != "\t" } ?? scalars.count
        while index < scalars.count {
            guard Self.isSchemeScalar(scalars[index]), index == 0 || !Self.isNameScalar(scalars[index - 1]) else {
                index += 1
                continue
            }
            let start = index
            while index < scalars.count, Self.isSchemeScalar(scalars[index]) { index += 1 }
            let word = String(String.UnicodeScalarView(scalars[start..<index])).lowercased()
            guard Self.credentialSchemes.contains(word) || (start == firstWord && leading.contains(word)),
                index < scalars.count, scalars[index] == " " || scalars[index] == "\t"
            else { continue }
            var credentialStart = index
            while credentialStart < scalars.count, scalars[credentialStart] == " " || scalars[credentialStart] == "\t" {
                credentialStart += 1
            }
            var end = credentialStart
            while end < scalars.count, !scalars[end].properties.isWhitespace, scalars[end] != "," { end += 1 }
            let credential = scalars[credentialStart..<end]
            guard !credential.isEmpty, !credential.starts(with: Self.mask.unicodeScalars), !Self.isParameter(credential) else {
                continue
            }
            result.append(contentsOf: scalars[copied..<credentialStart])
            result.append(contentsOf: Self.mask.unicodeScalars)
            copied = end
            index = end
        }
        guard copied > 0 else { return text }
        result.append(contentsOf: scalars[copied...])
        return String(result)
    }

    /// Whether `run` is an auth parameter (`realm="api"`, `error=x`) rather than a credential: an
    /// `=` followed by something other than `=` (a token68 credential ends with its `=` padding).
    private static func isParameter(_ run: ArraySlice<Unicode.Scalar>) -> Bool {
        guard let equals = run.firstIndex(of: "=") else { return false }
        return run[equals...].contains { $0 != "=" }
    }

    /// Characters of an authentication scheme's name: ASCII letters, digits and `-`.
    private static func isSchemeScalar(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "-"
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
