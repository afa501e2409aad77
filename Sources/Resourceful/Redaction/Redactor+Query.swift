package import Foundation

extension Redactor {
    /// Names masked in a query or a form beyond ``SensitiveNames``: `code`, the OAuth 2
    /// authorization code a redirect's `Location` carries (`?code=…&state=…`) and a token request
    /// sends. A JSON `code` is an error's code, and stays readable.
    static let queryOnlyNames: Set<String> = ["code"]

    /// A query string with the values of masked keys replaced. Pairs are split at `&` and at `;`,
    /// as servers that accept both separators read them (`user=a;password=…`).
    package func query(_ query: String) -> String {
        guard !query.isEmpty else { return query }
        var result = ""
        result.reserveCapacity(query.utf8.count)
        var pairStart = query.startIndex
        var index = query.startIndex
        while true {
            if index == query.endIndex || query[index] == "&" || query[index] == ";" {
                result += maskedPair(query[pairStart..<index])
                guard index < query.endIndex else { break }
                result.append(query[index])
                pairStart = query.index(after: index)
            }
            index = query.index(after: index)
        }
        return result
    }

    /// One `name=value` pair, its value replaced when its name is masked; a value that holds a
    /// JSON object or array (`filter={"password":…}`, which a server may parse) masked as JSON,
    /// or replaced when it looks like JSON but does not parse.
    private func maskedPair(_ pair: Substring) -> String {
        guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
        let name = String(pair[..<equals])
        if isMasked(formName: name) { return name + "=" + Self.mask }
        let encodedValue = String(pair[pair.index(after: equals)...])
        guard encodedValue.contains(where: { $0 == "{" || $0 == "[" || $0 == "%" }) else { return String(pair) }
        let value = RequestTarget.QueryItem(encodedName: encodedValue, encodedValue: nil).name
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (trimmed.hasPrefix("{") && trimmed.hasSuffix("}")) || (trimmed.hasPrefix("[") && trimmed.hasSuffix("]")) else {
            return String(pair)
        }
        let json = Data(value.utf8)
        guard let masked = maskedJSONDocument(json) else { return name + "=" + Self.mask }
        guard masked != json else { return String(pair) }
        return name + "=" + PercentEncoding.encode(String(decoding: masked, as: UTF8.self), allowing: .unreserved)
    }

    /// Query items as a query string, with the values of masked names replaced (split as
    /// ``query(_:)-(String)`` splits, so that a value holding `;password=…` is masked too).
    package func query(_ items: [RequestTarget.QueryItem]) -> String {
        query(RequestTarget.QueryItem.encoded(items))
    }

    /// A form body (`application/x-www-form-urlencoded`) with the values of masked names
    /// replaced; `nil` when it cannot be masked with certainty: not UTF-8, a raw control
    /// character (CR, LF: a form never holds one unencoded), or a name, once decoded, that is not
    /// a field's name (a JSON document sent as a form reads as one long name holding its secrets).
    package func maskedForm(_ body: Data) -> Data? {
        guard let text = String(validating: body, as: UTF8.self) else { return nil }
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return nil }
        for pair in text.split(whereSeparator: { $0 == "&" || $0 == ";" }) {
            let encodedName = pair.firstIndex(of: "=").map { pair[..<$0] } ?? pair
            let name = RequestTarget.QueryItem(encodedName: String(encodedName), encodedValue: nil).name
            guard name.unicodeScalars.allSatisfy(Self.isFieldNameScalar) else { return nil }
        }
        return Data(query(text).utf8)
    }

    /// Characters of a form field's name: letters, digits, and `_ - . [ ] :` and the space.
    private static func isFieldNameScalar(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.properties.isAlphabetic || scalar.properties.numericType != nil { return true }
        switch scalar {
        case "_", "-", ".", "[", "]", ":", " ": return true
        default: return false
        }
    }

    /// `target`'s URL without its userinfo and with the values of masked query names replaced.
    package func maskedURL(_ target: RequestTarget) -> String {
        var masked = target
        masked.query = []
        let url = Self.withoutUserinfo(masked.url)
        return target.query.isEmpty ? url : url + "?" + query(target.query)
    }

    /// `url` without its userinfo (`https://user:pass@host/` → `https://***@host/`), with the
    /// values of masked keys replaced in its query and in a fragment of `name=value` pairs (the
    /// `#access_token=…` of an implicit grant).
    package func maskedURL(_ url: String) -> String {
        let url = Self.withoutUserinfo(url)
        let fragment = url.firstIndex(of: "#")
        let beforeFragment = url[..<(fragment ?? url.endIndex)]
        var result: String
        if let question = beforeFragment.firstIndex(of: "?") {
            result = String(url[...question]) + query(String(beforeFragment[beforeFragment.index(after: question)...]))
        } else {
            result = String(beforeFragment)
        }
        if let fragment {
            result += "#" + query(String(url[url.index(after: fragment)...]))
        }
        return result
    }

    /// `url` with the userinfo of every authority in it (after each `://`, and after a leading
    /// `//`) replaced by `***`: the one of the URL, and those of URLs it carries (a quoted
    /// `Refresh` target, a `?next=https://user:password@…`). An authority ends at the first `/`,
    /// `?` or `#`, and its userinfo at its last `@`, so that whatever a parser could read as
    /// userinfo is masked.
    package static func withoutUserinfo(_ url: String) -> String {
        guard url.contains("@") else { return url }
        var result = ""
        var rest = Substring(url)
        func maskAuthority() {
            let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
            guard let at = rest[..<end].lastIndex(of: "@") else { return }
            result += Self.mask
            rest = rest[at...]
        }
        if rest.hasPrefix("//") {
            result += "//"
            rest = rest.dropFirst(2)
            maskAuthority()
        }
        while let separator = rest.range(of: "://") {
            result += rest[..<separator.upperBound]
            rest = rest[separator.upperBound...]
            maskAuthority()
        }
        return result + rest
    }

    /// Whether a query or form name such as `user[password]` or `user%5Bpassword%5D` holds a
    /// masked key.
    package func isMasked(formName: String) -> Bool {
        isMasked(decodedFormName: RequestTarget.QueryItem(encodedName: formName, encodedValue: nil).name)
    }

    /// Whether a decoded query or form name holds a masked key in any of its bracketed parts, as
    /// form parsers read them (`user[password]`, `password[0]`, `password[]`), or is `code`.
    package func isMasked(decodedFormName decoded: String) -> Bool {
        let parts = decoded.split(whereSeparator: { $0 == "[" || $0 == "]" })
        if parts.isEmpty { return names.contains(decoded) || Self.queryOnlyNames.contains(decoded.lowercased()) }
        return parts.contains { names.contains($0) || Self.queryOnlyNames.contains($0.lowercased()) }
    }
}
