package import Foundation

extension Redactor {
    /// Names masked in a query or a form beyond ``SensitiveNames``: `code`, the OAuth 2
    /// authorization code a redirect's `Location` carries (`?code=…&state=…`) and a token request
    /// sends. A JSON `code` is an error's code, and stays readable.
    static let queryOnlyNames: Set<String> = ["code"]

    /// A query string with the values of masked keys replaced. Pairs are split at `&` and at `;`,
    /// as servers that accept both separators read them (`user=a;password=…`).
    package func query(_ query: String) -> String {
        self.query(query, depth: 0)
    }

    /// ``query(_:)-(String)`` for a query found `depth` URLs deep in a query value. In a URL's
    /// query or fragment (`inURL`), a `?` or `#` starts a piece of its own too (`?a=1?token=…`,
    /// `#?a=1#?b=2`), as a reader that splits there reads it: each piece is masked once, where it
    /// stands, rather than again as a URL inside the value before it.
    private func query(_ query: String, depth: Int, inURL: Bool = false) -> String {
        guard !query.isEmpty else { return query }
        var result = ""
        result.reserveCapacity(query.utf8.count)
        var pairStart = query.startIndex
        var index = query.startIndex
        while true {
            if index == query.endIndex || query[index] == "&" || query[index] == ";"
                || (inURL && (query[index] == "?" || query[index] == "#"))
            {
                // A masked name's value runs to the next `&` pair or the end: a reader that splits
                // at `&` alone takes `;…` and `?…` as the password's (`password=a;x=b`,
                // `password=a?b`), and one that splits at `;` alone `&b`. Only a fragment ends it.
                if index < query.endIndex, query[index] != "#", givesAMaskedNameItsValue(query[pairStart..<index]),
                    query[index] != "&" || !Self.startsAPair(query, after: index)
                {
                    index = query.index(after: index)
                    continue
                }
                result += maskedPair(query[pairStart..<index], depth: depth)
                guard index < query.endIndex else { break }
                result.append(query[index])
                pairStart = query.index(after: index)
            }
            index = query.index(after: index)
        }
        return result
    }

    /// Whether `pair` is `name=…` with a masked name.
    private func givesAMaskedNameItsValue(_ pair: Substring) -> Bool {
        guard let equals = pair.firstIndex(of: "=") else { return false }
        return isMasked(formName: String(pair[..<equals]))
    }

    /// Whether a `name=` pair starts after the separator at `index`: a name (no separator, no
    /// space), then `=`.
    private static func startsAPair(_ query: String, after index: String.Index) -> Bool {
        var position = query.index(after: index)
        let start = position
        while position < query.endIndex {
            let character = query[position]
            if character == "=" { return position > start }
            if "&;?#".contains(character) || character.isWhitespace { return false }
            position = query.index(after: position)
        }
        return false
    }

    /// One `name=value` pair, its value replaced when its name is masked, else masked as
    /// ``maskedValue(_:depth:)`` masks a value; a piece without `=` (`?https%3A%2F%2Fu%3Ap%40h`,
    /// a fragment `#https%3A…`) masked as a value of its own.
    private func maskedPair(_ pair: Substring, depth: Int) -> String {
        guard let equals = pair.firstIndex(of: "=") else {
            return maskedValue(String(pair), depth: depth) ?? String(pair)
        }
        let name = String(pair[..<equals])
        if isMasked(formName: name) { return name + "=" + Self.mask }
        // A name may be an encoded URL too (`?https%3A%2F%2Fu%3Ap%40h=1`).
        let shownName = maskedValue(name, depth: depth) ?? name
        let encodedValue = String(pair[pair.index(after: equals)...])
        return shownName + "=" + (maskedValue(encodedValue, depth: depth) ?? encodedValue)
    }

    /// A percent-encoded value (of a query or form field, a path segment, a piece of a
    /// fragment) as it may be shown, or `nil` when it holds nothing to mask: one that holds a
    /// JSON object or array (`filter={"password":…}`, which a server may parse) masked as JSON,
    /// or replaced when it looks like JSON but does not parse; one that holds a URL, once decoded
    /// (`https%3A%2F%2Fu%3Ap%40h%2F`), masked as a URL and encoded again; one that gives a masked
    /// name a value once decoded (`password%3D…`), replaced whole; one that holds a URL
    /// to mask only once decoded again (`https%253A%252F%252Fu%253Ap%2540h`, as a chain of
    /// redirects decodes it), replaced whole.
    private func maskedValue(_ encodedValue: String, depth: Int) -> String? {
        guard encodedValue.contains(where: { "{[%@?#\\=:&".contains($0) }) else {
            // Nothing encoded: still a secret's name given a value (`password|…`, `<token>…`);
            // a value of name characters alone (`10`, `Ada`, `a-b.c`) gives none, unscanned.
            guard encodedValue.unicodeScalars.contains(where: { !Self.isNameScalar($0) && $0 != "+" }) else { return nil }
            return givesAMaskedNameAValue(encodedValue) ? Self.mask : nil
        }
        let value = RequestTarget.QueryItem(encodedName: encodedValue, encodedValue: nil).name
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (trimmed.hasPrefix("{") && trimmed.hasSuffix("}")) || (trimmed.hasPrefix("[") && trimmed.hasSuffix("]")) else {
            // URLs in values in URLs…: past a few, a value that may hold one is replaced, so that
            // hostile nesting costs no more than a few passes.
            guard depth < Self.maxDecodings else { return Self.mask }
            let masked = maskedURL(value, depth: depth + 1)
            if masked != value { return PercentEncoding.encode(masked, allowing: .unreserved) }
            // A form, as it is or once decoded (`password:=…`, `password%3D…`): nothing says which
            // part a reader decodes.
            if givesAMaskedNameAValue(value) { return Self.mask }
            var level = value
            for _ in 0..<Self.maxDecodings {
                let decoded = PercentEncoding.decode(level)
                guard decoded != level else { return nil }
                level = decoded
                if maskedURL(level, depth: depth + 1) != level { return Self.mask }
            }
            // Still encoded after as many decodings: nothing says what it hides.
            return PercentEncoding.decode(level) == level ? nil : Self.mask
        }
        let json = Data(value.utf8)
        guard let masked = maskedJSONDocument(json) else { return Self.mask }
        guard masked != json else { return nil }
        return PercentEncoding.encode(String(decoding: masked, as: UTF8.self), allowing: .unreserved)
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

    /// `target`'s URL without its userinfo, with the values of masked query names and path
    /// parameters (`;jsessionid=…`) replaced.
    package func maskedURL(_ target: RequestTarget) -> String {
        var masked = target
        masked.query = []
        let url = maskedPath(Self.withoutUserinfo(masked.url), depth: 0)
        return target.query.isEmpty ? url : url + "?" + query(target.query)
    }

    /// `url` without its userinfo (`https://user:pass@host/` → `https://***@host/`, as
    /// ``withoutUserinfo(_:)`` reads it), with the values of masked keys replaced in its path
    /// parameters (`/cart;jsessionid=…`), its query (values that hold URLs, once decoded, masked
    /// as URLs) and a fragment of `name=value` pairs (the `#access_token=…` of an implicit grant).
    /// The whole URL is replaced by `***` when it still holds userinfo once decoded
    /// (``holdsUserinfo(_:)``: `http://u:p&#64;h/`, `http:&#47;&#47;u:p@h/`).
    package func maskedURL(_ url: String) -> String {
        let masked = maskedURL(url, depth: 0)
        return Self.holdsUserinfo(masked) ? Self.mask : masked
    }

    /// ``maskedURL(_:)-(String)`` for a URL found `depth` URLs deep in a query value.
    private func maskedURL(_ url: String, depth: Int) -> String {
        let url = Self.withoutUserinfo(url)
        let fragment = url.firstIndex(of: "#")
        let beforeFragment = url[..<(fragment ?? url.endIndex)]
        var result: String
        if let question = beforeFragment.firstIndex(of: "?") {
            result =
                maskedPath(String(url[..<question]), depth: depth) + "?"
                + query(String(beforeFragment[beforeFragment.index(after: question)...]), depth: depth, inURL: true)
        } else {
            result = maskedPath(String(beforeFragment), depth: depth)
        }
        if let fragment {
            result += "#" + query(String(url[url.index(after: fragment)...]), depth: depth, inURL: true)
        }
        return result
    }

    /// `path` with each segment that holds an encoded URL to mask (`/proxy/https%3A%2F%2Fu%3Ap%40h`)
    /// masked as ``maskedValue(_:depth:)`` masks a value (in a URL found in a value, `depth` > 0,
    /// that value is decoded again and replaced whole instead), `***` when the whole path still
    /// spells one once decoded (`https%3A//user%3Apass%40host`), and the value of each masked path
    /// parameter replaced (``maskedPathParameters(_:)``).
    private func maskedPath(_ path: String, depth: Int) -> String {
        var path = path
        // Deeper, the caller decodes the whole value again and replaces it when it hides a URL.
        if depth == 0, path.contains("%") {
            path = path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
                // Only a segment that decoding changes can hide something (`50%` stays).
                guard segment.contains("%"), PercentEncoding.decode(String(segment)) != segment else { return String(segment) }
                return maskedValue(String(segment), depth: depth) ?? String(segment)
            }.joined(separator: "/")
            // Slashes left as they are around encoded parts (`https%3A//user%3Apass%40host`) can
            // spell a URL with userinfo no one segment holds: the path is replaced whole.
            if Self.holdsUserinfo(path) { return Self.mask }
        }
        return maskedPathParameters(path)
    }

    /// `path` with the value of each masked path parameter replaced (`/cart;jsessionid=…`, the
    /// `;name=value` a servlet container reads from a path segment).
    func maskedPathParameters(_ path: String) -> String {
        guard path.contains(";") else { return path }
        var result = ""
        var rest = Substring(path)
        while let semicolon = rest.firstIndex(of: ";") {
            result += rest[...semicolon]
            rest = rest[rest.index(after: semicolon)...]
            let end = rest.firstIndex(where: { $0 == "/" || $0 == ";" }) ?? rest.endIndex
            let parameter = rest[..<end]
            if let equals = parameter.firstIndex(of: "="), isMasked(formName: String(parameter[..<equals])) {
                result += parameter[...equals] + Self.mask
                rest = rest[end...]
            }
        }
        return result + rest
    }

    /// How many times a query value is decoded when looking for a URL in it.
    static let maxDecodings = 4

    /// Schemes a WHATWG URL parser reads an authority after whatever slashes follow (`https:h`,
    /// `https:\\\\h`, `https:///h` all name the host `h`).
    private static let specialSchemes: Set<String> = ["http", "https", "ws", "wss", "ftp", "file"]

    /// `url` with the userinfo of every authority in it replaced by `***`: the one of the URL,
    /// and those of URLs it carries (a quoted `Refresh` target, a `?next=https://user:password@…`,
    /// a `postgres://app:password@db/prod`). An authority is read as a WHATWG URL parser reads
    /// one: after a special scheme (`http`, `https`, `ws`, `wss`, `ftp`, `file`), its colon and
    /// any number of `/` or `\` (none too: `https:user:pass@host`); after any other scheme, `//`;
    /// after `//` (or `\\`, `\/\/`) anywhere (a scheme-relative URL: `see //user:pass@host/x`). It ends at the first `/`, `?` or `#`, and its userinfo at its last
    /// `@`, so that whatever a parser could read as userinfo is masked.
    ///
    /// A WHATWG parser drops every tab, CR and LF of a URL first (`ht\ttps:/\t/user:pass@h`):
    /// when text without them has userinfo to mask, that text is returned, masked.
    package static func withoutUserinfo(_ url: String) -> String {
        guard url.contains("@") else { return url }
        let masked = withoutUserinfo(unicodeScalars: Array(url.unicodeScalars))
        guard url.unicodeScalars.contains(where: { $0 == "\t" || $0 == "\r" || $0 == "\n" }) else { return masked ?? url }
        let compact = url.unicodeScalars.filter { $0 != "\t" && $0 != "\r" && $0 != "\n" }
        guard let compactMasked = withoutUserinfo(unicodeScalars: Array(compact)),
            compactMasked != masked.map({ String($0.unicodeScalars.filter { $0 != "\t" && $0 != "\r" && $0 != "\n" }) })
        else { return masked ?? url }
        return compactMasked
    }

    /// Whether `text` holds a URL with userinfo as it is or once decoded (``decodedOnce(_:)``:
    /// percent-encoding, JSON's and HTML's escapes), up to ``maxDecodings`` times
    /// (`https%3A%2F%2Fuser%3Apass%40host`, `http://u:p&#64;h/`, `http:\/\/u:p\u0040h/`); `true`
    /// too when it is still encoded after as many decodings, since nothing says what it hides.
    package static func holdsUserinfo(_ text: String) -> Bool {
        var level = text
        for _ in 0...maxDecodings {
            if withoutUserinfo(level) != level { return true }
            let decoded = decodedOnce(level)
            guard decoded != level else { return false }
            level = decoded
        }
        return true
    }

    /// ``withoutUserinfo(_:)`` of `scalars`; `nil` when there is no userinfo to mask.
    private static func withoutUserinfo(unicodeScalars scalars: [Unicode.Scalar]) -> String? {
        var result = String.UnicodeScalarView()
        var copied = 0
        // The end of the last authority read and its last `@`: authorities start further on each
        // time, so one that starts before that end ends there too, and each scalar is read once.
        var knownEnd = -1
        var knownLastAt: Int?
        /// Masks the userinfo of the authority starting at `start`, if it has one; where to go on.
        func maskAuthority(at start: Int) -> Int {
            if start > knownEnd {
                var end = start
                knownLastAt = nil
                while end < scalars.count, scalars[end] != "/", scalars[end] != "?", scalars[end] != "#" {
                    if scalars[end] == "@" { knownLastAt = end }
                    end += 1
                }
                knownEnd = end
            }
            guard let at = knownLastAt, at >= start, start >= copied else { return start }
            result.append(contentsOf: scalars[copied..<start])
            result.append(contentsOf: mask.unicodeScalars)
            copied = at
            return at + 1
        }
        var index = 0
        while index < scalars.count {
            // A scheme-relative URL (`//user:pass@host`, `\\user:pass@host` as a WHATWG parser
            // reads one against a base of a special scheme, `\/\/…` as JSON escapes it), wherever
            // it stands in a text.
            if scalars[index] == "/" || scalars[index] == "\\", index + 1 < scalars.count,
                scalars[index + 1] == "/" || scalars[index + 1] == "\\"
            {
                var authority = index
                while authority < scalars.count, scalars[authority] == "/" || scalars[authority] == "\\" { authority += 1 }
                index = max(maskAuthority(at: authority), authority)
                continue
            }
            guard scalars[index] == ":" else {
                index += 1
                continue
            }
            let colon = index
            index += 1
            // The scheme: a letter, then letters, digits, `+`, `-` or `.`.
            var start = colon
            while start > 0, isSchemeScalar(scalars[start - 1]) { start -= 1 }
            while start < colon, !isASCIILetter(scalars[start]) { start += 1 }
            guard start < colon else { continue }
            let scheme = String(String.UnicodeScalarView(scalars[start..<colon])).lowercased()
            if specialSchemes.contains(scheme) {
                var authority = index
                while authority < scalars.count, scalars[authority] == "/" || scalars[authority] == "\\" { authority += 1 }
                index = maskAuthority(at: authority)
            } else if index + 1 < scalars.count, scalars[index] == "/", scalars[index + 1] == "/" {
                index = maskAuthority(at: index + 2)
            }
        }
        guard copied > 0 else { return nil }
        result.append(contentsOf: scalars[copied...])
        return String(result)
    }

    private static func isASCIILetter(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
    }

    /// RFC 3986's scheme characters.
    private static func isSchemeScalar(_ scalar: Unicode.Scalar) -> Bool {
        isASCIILetter(scalar) || ("0"..."9").contains(scalar) || scalar == "+" || scalar == "-" || scalar == "."
    }

    /// Whether a query or form name such as `user[password]` or `user%5Bpassword%5D` holds a
    /// masked key, once decoded or decoded again up to ``maxDecodings`` times (`%2570assword` is
    /// `password` encoded twice, as a chain of proxies may decode it); `true` when it still
    /// decodes to something else after as many rounds, since nothing says what it names.
    package func isMasked(formName: String) -> Bool {
        var level = RequestTarget.QueryItem(encodedName: formName, encodedValue: nil).name
        for _ in 0..<Self.maxDecodings {
            if isMasked(decodedFormName: level) { return true }
            guard level.contains("%") else { return false }
            let decoded = PercentEncoding.decode(level)
            guard decoded != level else { return false }
            level = decoded
        }
        return isMasked(decodedFormName: level) || PercentEncoding.decode(level) != level
    }

    /// Whether a decoded query or form name holds a masked key in any of its bracketed parts, as
    /// form parsers read them (`user[password]`, `password[0]`, `password[]`), or is `code`.
    package func isMasked(decodedFormName decoded: String) -> Bool {
        let parts = decoded.split(whereSeparator: { $0 == "[" || $0 == "]" })
        if parts.isEmpty { return names.contains(decoded) || Self.queryOnlyNames.contains(decoded.lowercased()) }
        return parts.contains { names.contains($0) || Self.queryOnlyNames.contains($0.lowercased()) }
    }
}
