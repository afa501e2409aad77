extension Redactor {
    /// A text value (a JSON string, a multipart field of plain text) as it may be shown: every URL
    /// in it without its userinfo and with its masked query values and path parameters replaced
    /// (`postgres://app:***@db/prod` → `postgres://***@db/prod`), percent-encoded ones too
    /// (`https%3A%2F%2Fapp%3A…%40db`), a form in it (`password=…&a=1`) with its masked values
    /// replaced, the credential after an authentication scheme (`Bearer …`, `Basic …`) replaced;
    /// and the whole text replaced by `***` when it still gives a masked name a value in a way
    /// these rules do not mask field by field (`prefix {"password":"…"}`, `a=1 password=…`), so
    /// that it is never shown as it is.
    ///
    /// A name counts when it is followed by `=`, or by `:` when it is quoted (as in JSON) or starts
    /// a line (a header line, YAML); prose such as `invalid token: expired` stays readable.
    package func maskedText(_ text: String) -> String {
        guard text.contains(where: { "@=:?#;%".contains($0) || $0.isWhitespace }) else { return text }
        var masked = maskedURLs(in: text)
        if masked.contains("="), !masked.contains(where: \.isWhitespace) { masked = query(masked) }
        masked = maskedSchemeCredentials(in: masked)
        return givesAMaskedNameAValue(masked) ? Self.mask : masked
    }

    /// Whether `text` holds a masked name followed by `=` (or by `:`, quoted or at the start of a
    /// line) and a value other than `***`; in one pass.
    func givesAMaskedNameAValue(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
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
            let name = String(String.UnicodeScalarView(scalars[start..<index]))
            var position = index
            var quoted = false
            if start > 0, scalars[start - 1] == "\"" || scalars[start - 1] == "'", position < scalars.count,
                scalars[position] == scalars[start - 1]
            {
                quoted = true
                position += 1
            }
            while position < scalars.count, scalars[position] == " " || scalars[position] == "\t" { position += 1 }
            guard position < scalars.count else { break }
            let assigns: Bool
            switch scalars[position] {
            case "=": assigns = isMasked(formName: name)
            case ":":
                // `"password": …` as in JSON, or a line of its own: `Authorization: Bearer …`,
                // `password: …` as in YAML.
                let startsALine = lineContent == (quoted ? start - 1 : start)
                assigns = (quoted && names.contains(name)) || (startsALine && names.isSensitiveHeader(name))
            default: assigns = false
            }
            guard assigns else { continue }
            position += 1
            while position < scalars.count, " \t\"'".unicodeScalars.contains(scalars[position]) { position += 1 }
            let value = scalars[position...]
            // No value (or base64 padding: `…Token==`) is nothing to hide.
            guard value.isEmpty || value.starts(with: Self.mask.unicodeScalars) || "&;,}]=".unicodeScalars.contains(value[value.startIndex])
            else { return true }
        }
        return false
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
