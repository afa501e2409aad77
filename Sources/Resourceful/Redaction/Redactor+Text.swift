import Foundation

extension Redactor {
    /// A text value (a JSON string, a multipart field of plain text) as it may be shown: every URL
    /// in it without its userinfo and with its masked query values and path parameters replaced
    /// (`postgres://app:***@db/prod` → `postgres://***@db/prod`, `see //user:***@host` too),
    /// percent-encoded ones too (`https%3A%2F%2Fapp%3A…%40db`), a form in it (`password=…&a=1`)
    /// with its masked values replaced, the credential after an authentication scheme (`Bearer …`,
    /// `Basic …`) replaced; and the whole text replaced by `***` when it still gives a masked name
    /// a value in a way these rules do not mask field by field (`prefix {"password":"…"}`,
    /// `a=1 password=…`, `password|…`, `data={\"password\":\"…\"}`), as it is or once
    /// percent-decoded (``givesAMaskedNameAValue(_:reading:)``), so that it is never shown as it is.
    ///
    /// Prose stays readable: a word after a masked name and a space is the next word
    /// (`The access token expired`, `password reset required`), and so is what follows `: `
    /// unless the name is quoted or starts a line (`invalid token: expired`).
    package func maskedText(_ text: String) -> String {
        // A run of name characters alone gives nothing a value (`%` included: `password%3D…`).
        guard text.unicodeScalars.contains(where: { !Self.isNameScalar($0) || $0 == "%" }) else { return text }
        var masked = maskedURLs(in: text)
        // A form (`password=…&a=1`); a URL's query is masked by the URL rules.
        if masked.contains("="), !masked.contains(where: { $0.isWhitespace || $0 == "?" }) { masked = query(masked) }
        masked = maskedSchemeCredentials(in: masked)
        return givesAMaskedNameAValue(masked) ? Self.mask : masked
    }

    /// How ``givesAMaskedNameAValue(_:reading:)`` reads what follows a masked name.
    struct ValueReading: Sendable {
        /// A word after a masked name and white space is its value (`password S…`, `secret S…`),
        /// as in a header field's value; in prose it is the next word (`password reset required`).
        var wordIsAValue: Bool
        /// `:` and white space give a value only after a quoted name or a name that starts a line
        /// (`"password": …` as in JSON, `password: …` as in YAML), so that prose such as
        /// `invalid token: expired` stays readable.
        var colonNeedsContext: Bool
        /// Names a header's rule calls sensitive (`X-Session-Id`) count wherever they stand, not
        /// only at the start of a line.
        var headerNamesAnywhere: Bool

        /// Free text: a JSON string, a part of plain text, an event's `id`.
        static let text = ValueReading(wordIsAValue: false, colonNeedsContext: true, headerNamesAnywhere: false)
        /// A header field's value that is not a challenge.
        static let fieldValue = ValueReading(wordIsAValue: true, colonNeedsContext: false, headerNamesAnywhere: true)
        /// A challenge (`WWW-Authenticate`): its `error_description` is prose.
        static let challenge = ValueReading(wordIsAValue: false, colonNeedsContext: false, headerNamesAnywhere: true)
    }

    /// Whether `text` gives a masked name a value other than `***`, as it is or once decoded up to
    /// ``maxDecodings`` times (``decodedOnce(_:)``: percent-encoding, JSON's and HTML's escapes:
    /// `password%25253D…`, `%2570assword=…`, `{\"\u0070assword\":…}`, `&#112;assword=…`); `true`
    /// too when it still decodes to something else after as many rounds, since nothing says what
    /// it hides. Characters that show nothing (zero-width spaces and joiners, soft hyphens) are
    /// read as absent, and compatibility forms as their plain ones (`password＝…` is `password=…`).
    ///
    /// The rule is an allow-list. After a masked name (with its closing quote, if it has one, and
    /// any white space), the name has no value only when what follows plainly ends it:
    ///
    /// - the end of the text;
    /// - `&` that starts the next pair of a form (not a character reference such as `&#61;`;
    ///   `&amp;` is one `&`), `)`, `}`, `<` (the next tag), or `>` (not of an arrow `->`);
    /// - `,`, `;`, `!` or `?` followed by white space or the end (a list, parameters, a sentence),
    ///   and `,` or `;` followed by the next `name=` pair (`auth;dur=12`);
    /// - `/`, `?`, `#` or `;` after a name that is a path segment (`/auth/login`,
    ///   `/reset-password?lang=en`): a URL's query and path parameters are masked by the URL rules;
    /// - `=` or `:` followed by nothing, by `***`, or by `&`, `;`, `,`, `}`, `]`, `=` or `<`;
    /// - for prose (``ValueReading``), a word, a quote or `(` after white space, and `: ` after a
    ///   name that is a word of a sentence (`invalid token: expired`), not quoted, at the start of
    ///   a line or after a sign (`note: password: …`, `user=a, pass: …` give a value).
    ///
    /// Anything else is a value: `=`, `:` and an element's content (`<password>…`,
    /// `<password type="text">…`), and any other
    /// separator (`password|…`, `password,…`, `password/…`, `password->…`, `password&#61;…`,
    /// `password\u003d…`, `{\"password\":\"…\"}`, `password !…` in a header field's value).
    func givesAMaskedNameAValue(_ text: String, reading: ValueReading = .text) -> Bool {
        var level = text
        if level.unicodeScalars.contains(where: { !$0.isASCII }) {
            level = String(String.UnicodeScalarView(level.unicodeScalars.filter { !$0.properties.isDefaultIgnorableCodePoint }))
            level = level.precomposedStringWithCompatibilityMapping
        }
        var round = 0
        while true {
            if scanGivesAValue(level, reading: reading) { return true }
            // `http://u:p&#64;h/`, `http:&#47;&#47;u:p@h/`: userinfo a reader finds once decoded.
            if round > 0, level.contains("@"), Self.withoutUserinfo(level) != level { return true }
            let decoded = Self.decodedOnce(level)
            guard decoded != level else { return false }
            guard round < Self.maxDecodings else { return true }
            round += 1
            level = decoded
        }
    }

    /// `text` decoded once as a reader of it might: every `%XX` (``percentDecoded(_:)``), then
    /// JSON's escapes (`\"`, `\\`, `\/`, `\uXXXX`, and `\xXX` as other languages write one) and HTML's character references (`&#61;`,
    /// `&#x3D;`, `&quot;`, `&amp;`, `&equals;`…); others are left as they are.
    static func decodedOnce(_ text: String) -> String {
        let percent = percentDecoded(text)
        guard percent.contains("\\") || percent.contains("&") else { return percent }
        let scalars = Array(percent.unicodeScalars)
        var result = String.UnicodeScalarView()
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "\\", index + 1 < scalars.count {
                switch scalars[index + 1] {
                case "\"", "\\", "/":
                    result.append(scalars[index + 1])
                    index += 2
                    continue
                case "x":
                    if index + 3 < scalars.count, let value = UInt32(String(String.UnicodeScalarView(scalars[(index + 2)..<(index + 4)])), radix: 16),
                        let decoded = Unicode.Scalar(value)
                    {
                        result.append(decoded)
                        index += 4
                        continue
                    }
                case "u":
                    if index + 5 < scalars.count, let value = UInt32(String(String.UnicodeScalarView(scalars[(index + 2)..<(index + 6)])), radix: 16),
                        let decoded = Unicode.Scalar(value)
                    {
                        result.append(decoded)
                        index += 6
                        continue
                    }
                default: break
                }
            } else if scalar == "&", let semicolon = scalars[(index + 1)...].prefix(12).firstIndex(of: ";"),
                let decoded = characterReference(String(String.UnicodeScalarView(scalars[(index + 1)..<semicolon])))
            {
                result.append(decoded)
                index = semicolon + 1
                continue
            }
            result.append(scalar)
            index += 1
        }
        return String(result)
    }

    /// Named character references that spell what separates a name from its value.
    private static let namedReferences: [String: Unicode.Scalar] = [
        "amp": "&", "quot": "\"", "apos": "'", "lt": "<", "gt": ">", "equals": "=", "colon": ":", "sol": "/", "bsol": "\\",
        "verbar": "|", "vert": "|", "comma": ",", "semi": ";", "num": "#", "excl": "!", "lpar": "(", "rpar": ")",
        "commat": "@", "lcub": "{", "rcub": "}", "lbrace": "{", "rbrace": "}", "nbsp": "\u{00A0}",
    ]

    /// The scalar an HTML character reference's body (`#61`, `#x3D`, `equals`) stands for.
    private static func characterReference(_ body: String) -> Unicode.Scalar? {
        if body.hasPrefix("#x") || body.hasPrefix("#X") { return UInt32(body.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init) }
        if body.hasPrefix("#") { return UInt32(body.dropFirst(), radix: 10).flatMap(Unicode.Scalar.init) }
        return namedReferences[body.lowercased()]
    }

    /// ``givesAMaskedNameAValue(_:reading:)`` of one level of decoding, in one pass.
    private func scanGivesAValue(_ text: String, reading: ValueReading) -> Bool {
        // A `+` is a space in a form: `password+S…` is `password S…`.
        let scalars = Array(text.unicodeScalars).map { reading.wordIsAValue && $0 == "+" ? " " : $0 }
        var index = 0
        // Where the current line's first character other than a space is.
        var lineContent: Int?
        while index < scalars.count {
            guard Self.isNameScalar(scalars[index]) else {
                switch scalars[index] {
                case "\n": lineContent = nil
                case " ", "\t", "\r": break
                default: lineContent = lineContent ?? index
                }
                index += 1
                continue
            }
            let start = index
            lineContent = lineContent ?? start
            while index < scalars.count, Self.isNameScalar(scalars[index]) { index += 1 }
            let end = index
            var position = end
            let opening = start > 0 && (scalars[start - 1] == "\"" || scalars[start - 1] == "'") ? scalars[start - 1] : nil
            // `password's`, `password’s`: an apostrophe, and the rest of a word of prose.
            if !reading.wordIsAValue, opening != "'", position + 1 < scalars.count,
                scalars[position] == "'" || scalars[position] == "\u{2019}", scalars[position + 1].properties.isAlphabetic
            {
                continue
            }
            var quoted = false
            if position < scalars.count, scalars[position] == "\"" || scalars[position] == "'" {
                quoted = scalars[position] == opening
                position += 1
            }
            let beforeSpaces = position
            while position < scalars.count, scalars[position].properties.isWhitespace { position += 1 }
            guard position < scalars.count else { break }
            let spaced = position > beforeSpaces
            let startsALine = lineContent == (opening != nil ? start - 1 : start)
            // A name after a sign rather than a word starts a field of its own: `note: password: …`,
            // `user=a, pass: …` (`invalid token: expired` is prose).
            var before = (opening != nil ? start - 1 : start) - 1
            while before >= 0, scalars[before] == " " || scalars[before] == "\t" { before -= 1 }
            let startsAField = startsALine || (before >= 0 && !Self.isNameScalar(scalars[before]))
            // `<password type="text">…`: an element's content is its value, whatever its attributes.
            let separator: Separator
            if spaced, Self.opensATag(scalars, nameStart: start), let close = Self.endOfTag(scalars, from: position) {
                position = close
                separator = .element
            } else {
                separator = Self.separator(
                    scalars, at: position, spaced: spaced, reading: reading, nameStart: start, nameEnd: end,
                    contextForColon: quoted || startsAField)
            }
            guard separator != .none else { continue }
            let name = String(String.UnicodeScalarView(scalars[start..<end]))
            let masked: Bool
            switch separator {
            case .equals: masked = isMasked(formName: name) || (reading.headerNamesAnywhere && names.isSensitiveHeader(name))
            default:
                // `code` is masked in a form only: `code: 404` is an error's code.
                masked =
                    (names.contains(name) || (isMasked(formName: name) && !Self.queryOnlyNames.contains(name.lowercased())))
                    || ((reading.headerNamesAnywhere || startsALine) && names.isSensitiveHeader(name))
            }
            guard masked else { continue }
            // A list of names (`no-cache="Set-Cookie,Authorization"`, `read:token,write:token`):
            // what follows the comma is the next name, not a value.
            if separator == .other, !spaced, scalars[position] == ",", nextItemIsAName(scalars, after: position, scoped: start > 0 && scalars[start - 1] == ":") {
                continue
            }
            var value = position
            switch separator {
            case .equals, .element:
                value += 1
                while value < scalars.count, " \t\"'".unicodeScalars.contains(scalars[value]) || scalars[value].properties.isWhitespace {
                    value += 1
                }
                // No value (or base64 padding: `…Token==`, an empty element) is nothing to hide.
                if Self.givesNoValue(scalars, from: value) { continue }
            case .other:
                // Past the separator's characters (`->`, `|`, `&#`), nothing or `***` is nothing to hide.
                while value < scalars.count, !Self.isNameScalar(scalars[value]), !Self.startsMask(scalars, at: value) { value += 1 }
                if value == scalars.count { continue }
            case .none: continue
            }
            if Self.startsMask(scalars, at: value), Self.endsAfterMask(scalars, at: value + Self.mask.unicodeScalars.count) { continue }
            return true
        }
        return false
    }

    /// Whether the item after the comma at `comma` is a name of a list rather than a value: a
    /// masked name or a sensitive header's (`Set-Cookie,Authorization`), or, in a list of
    /// scopes (`scoped`: the name follows a `:`), another `word:word` (`read:token,write:token`);
    /// it ends at the end, white space, a quote, `,`, `;` or `)`.
    private func nextItemIsAName(_ scalars: [Unicode.Scalar], after comma: Int, scoped: Bool) -> Bool {
        var start = comma + 1
        while start < scalars.count, scalars[start] == " " { start += 1 }
        func nameRun(from index: Int) -> Int {
            var end = index
            while end < scalars.count, Self.isNameScalar(scalars[end]) { end += 1 }
            return end
        }
        func endsAnItem(_ index: Int) -> Bool {
            index == scalars.count || scalars[index].properties.isWhitespace || "\"',;)".unicodeScalars.contains(scalars[index])
        }
        let end = nameRun(from: start)
        guard end > start else { return false }
        if scoped {
            guard end < scalars.count, scalars[end] == ":" else { return false }
            let second = nameRun(from: end + 1)
            return second > end + 1 && endsAnItem(second)
        }
        guard endsAnItem(end) else { return false }
        let item = String(String.UnicodeScalarView(scalars[start..<end]))
        return names.contains(item) || names.isSensitiveHeader(item)
    }

    /// What follows a name in ``scanGivesAValue(_:reading:)``.
    private enum Separator {
        /// Nothing that gives the name a value.
        case none
        /// `=`, or `:` where it assigns: its value follows.
        case equals
        /// The `>` of an element's opening tag (`<password>…`): its content follows.
        case element
        /// Any other character: a separator of some syntax, or the value itself.
        case other
    }

    /// How the character at `position` after a name reads (``givesAMaskedNameAValue(_:reading:)``
    /// says which characters end a name without a value).
    private static func separator(
        _ scalars: [Unicode.Scalar], at position: Int, spaced: Bool, reading: ValueReading, nameStart: Int, nameEnd: Int,
        contextForColon: Bool
    ) -> Separator {
        let next = scalars[position]
        let following: Unicode.Scalar? = position + 1 < scalars.count ? scalars[position + 1] : nil
        let endsHere = following.map { $0.properties.isWhitespace } ?? true
        let pathSegment = nameStart > 0 && scalars[nameStart - 1] == "/"
        if spaced, !reading.wordIsAValue {
            // Prose: the next word, a parenthesis, a quoted word.
            if isNameScalar(next) || next == "(" || next == "\"" || next == "'" { return .none }
        }
        switch next {
        case "=": return .equals
        case ":":
            if reading.colonNeedsContext, !contextForColon, spaced || endsHere { return .none }
            return .equals
        case ">":
            if opensATag(scalars, nameStart: nameStart) { return .element }
            // `->` is an arrow, not the end of a tag.
            return scalars[nameEnd - 1] == "-" && !spaced ? .other : .none
        case ")", "}", "<": return .none
        case "&": return startsACharacterReference(scalars, at: position) ? .other : .none
        case ",", ";":
            // `a;dur=12`, `a,b=1`: the next pair of a list of parameters.
            if endsHere || (pathSegment && !spaced && next == ";") || startsAPair(scalars, at: position + 1) { return .none }
            return .other
        case "!", "?": return endsHere || (pathSegment && !spaced && next == "?") ? .none : .other
        case "/", "#": return pathSegment && !spaced ? .none : .other
        default: return .other
        }
    }

    /// Whether the name at `nameStart` is an element's name in an opening tag: right after `<`,
    /// or after a namespace prefix of any characters but spaces and markup (`<wsse:Password`,
    /// `<a:b:token`, `<ns·1:password`, `<:password`).
    private static func opensATag(_ scalars: [Unicode.Scalar], nameStart: Int) -> Bool {
        var index = nameStart - 1
        guard index >= 0 else { return false }
        if scalars[index] == "<" { return true }
        guard scalars[index] == ":" else { return false }
        while index >= 0, !scalars[index].properties.isWhitespace, !"<>\"'=/&;".unicodeScalars.contains(scalars[index]) {
            index -= 1
        }
        return index >= 0 && scalars[index] == "<"
    }

    /// The `>` that closes an opening tag whose attributes start at `index`, before any `<`; `nil`
    /// when there is none or the tag closes itself (`/>`).
    private static func endOfTag(_ scalars: [Unicode.Scalar], from index: Int) -> Int? {
        var end = index
        while end < scalars.count, scalars[end] != ">", scalars[end] != "<" { end += 1 }
        guard end < scalars.count, scalars[end] == ">", scalars[end - 1] != "/" else { return nil }
        return end
    }

    /// Whether a `name=` pair starts at `index`: name characters, then `=`.
    private static func startsAPair(_ scalars: [Unicode.Scalar], at index: Int) -> Bool {
        var end = index
        while end < scalars.count, isNameScalar(scalars[end]) { end += 1 }
        return end > index && end < scalars.count && scalars[end] == "="
    }

    /// Whether the `&` at `position` starts a character reference other than `&amp;`: `&#…`, or
    /// `&` and letters and `;` (`&equals;`).
    private static func startsACharacterReference(_ scalars: [Unicode.Scalar], at position: Int) -> Bool {
        var index = position + 1
        guard index < scalars.count else { return false }
        if scalars[index] == "#" { return true }
        while index < scalars.count, scalars[index].isASCII, scalars[index].properties.isAlphabetic { index += 1 }
        guard index > position + 1, index < scalars.count, scalars[index] == ";" else { return false }
        return String(String.UnicodeScalarView(scalars[(position + 1)..<index])).lowercased() != "amp"
    }

    /// Whether what starts at `index`, after a masked name's `=` or `:` (and any spaces and
    /// quotes), leaves the name without a value: the end, or a run of separators (`=`, `&`, `;`,
    /// `,`, `}`, `]`, quotes, white space) up to the end, `***`, the next pair (`&a=1`,
    /// `, "b": 1`) or a closing tag (`</password>`). Anything else is a value: `password:=…`,
    /// `password = = …`, `password=="…"`, `password: <…>`, `password=;…`.
    private static func givesNoValue(_ scalars: [Unicode.Scalar], from start: Int) -> Bool {
        var index = start
        while index < scalars.count, "=&;,}]\"'".unicodeScalars.contains(scalars[index]) || scalars[index].properties.isWhitespace {
            index += 1
        }
        guard index < scalars.count else { return true }
        if startsMask(scalars, at: index) { return endsAfterMask(scalars, at: index + mask.unicodeScalars.count) }
        if scalars[index] == "<" { return index + 1 < scalars.count && scalars[index + 1] == "/" }
        // The next pair, after a separator (`:=a=1` is a value).
        guard scalars[start..<index].contains(where: { "&;,}]".unicodeScalars.contains($0) }) else { return false }
        return startsAField(scalars, at: index)
    }

    /// Whether a field's name starts at `index`: name characters, a closing quote if any, white
    /// space, then `=` or `:` (`a=1`, `"b": 1`).
    private static func startsAField(_ scalars: [Unicode.Scalar], at index: Int) -> Bool {
        var end = index
        while end < scalars.count, isNameScalar(scalars[end]) { end += 1 }
        guard end > index else { return false }
        if end < scalars.count, scalars[end] == "\"" || scalars[end] == "'" { end += 1 }
        while end < scalars.count, scalars[end] == " " || scalars[end] == "\t" { end += 1 }
        return end < scalars.count && (scalars[end] == "=" || scalars[end] == ":")
    }

    /// Whether `***` ending at `index` stands alone: after at most one character that closes what
    /// holds it (a quote, `>`, `)`), the end, white space, `}`, `]`, `<`, `/`, `?`, `#`, or `&`,
    /// `;` or `,` before the end or the next field (`&a=1`, `, "b": 1`). `password=***)w0rd`,
    /// `password=***"x` and `password=***;x` still give a value.
    private static func endsAfterMask(_ scalars: [Unicode.Scalar], at start: Int) -> Bool {
        var index = start
        if index < scalars.count, "\"'>)".unicodeScalars.contains(scalars[index]) { index += 1 }
        guard index < scalars.count else { return true }
        let next = scalars[index]
        guard "&;,".unicodeScalars.contains(next) else { return next.properties.isWhitespace || "}]</?#".unicodeScalars.contains(next) }
        index += 1
        while index < scalars.count, scalars[index] == " " || scalars[index] == "\t" || scalars[index] == "\"" || scalars[index] == "'" {
            index += 1
        }
        return index == scalars.count || startsAField(scalars, at: index) || startsMask(scalars, at: index)
    }

    /// Whether `***` starts at `index`, as a whole: not followed by a name's character.
    private static func startsMask(_ scalars: [Unicode.Scalar], at index: Int) -> Bool {
        let mask = Array(Self.mask.unicodeScalars)
        guard index + mask.count <= scalars.count, Array(scalars[index..<(index + mask.count)]) == mask else { return false }
        let after = index + mask.count
        return after == scalars.count || !isNameScalar(scalars[after])
    }

    /// Characters of a name a form or a document in a text may give a value: letters, digits,
    /// `_ - . [ ] % +`.
    static func isNameScalar(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.properties.isAlphabetic || scalar.properties.numericType != nil { return true }
        switch scalar {
        case "_", "-", ".", "[", "]", "%", "+": return true
        default: return false
        }
    }
}
