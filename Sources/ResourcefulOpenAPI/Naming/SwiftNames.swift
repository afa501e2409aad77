/// Swift names from the names an OpenAPI document uses on the wire.
///
/// Words are split at anything that is not a letter or a digit and at a lower-to-upper case change
/// (`pet_id`, `pet-id`, `petId` and `PetID` are all the words `pet` and `id`). Type names join the
/// words in UpperCamelCase, members in lowerCamelCase. A name that would start with a digit gets
/// a leading underscore; a keyword is written in backticks where Swift needs them.
enum SwiftNames {
    /// `listUsers` → `ListUsers`, `user-account` → `UserAccount`.
    static func typeName(_ wire: String) -> String {
        let words = self.words(wire)
        guard !words.isEmpty else { return "Value" }
        let joined = words.map(capitalised).joined()
        return startsWithDigit(joined) ? "_" + joined : joined
    }

    /// `pet_id` → `petId`, `Content-Type` → `contentType`; keywords in backticks.
    static func memberName(_ wire: String) -> String {
        let words = self.words(wire)
        guard let first = words.first else { return "value" }
        let joined = lowercasedWord(first) + words.dropFirst().map(capitalised).joined()
        let name = startsWithDigit(joined) ? "_" + joined : joined
        return escaped(name)
    }

    /// An enum case for a value: `in-stock` → `inStock`, `""` → `empty`, `42` → `_42`.
    static func caseName(_ value: String) -> String {
        if value.isEmpty { return "empty" }
        let words = self.words(value)
        if words.isEmpty {
            return "value" + value.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: "_")
        }
        return memberName(value)
    }

    /// A member name without its backticks, for composing other names.
    static func bare(_ name: String) -> String {
        name.hasPrefix("`") ? String(name.dropFirst().dropLast()) : name
    }

    /// Swift's keywords that need backticks as a member or case name.
    static let keywords: Set<String> = [
        "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init",
        "inout", "internal", "let", "open", "operator", "private", "precedencegroup", "protocol", "public",
        "rethrows", "static", "struct", "subscript", "typealias", "var", "break", "case", "catch", "continue",
        "default", "defer", "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return",
        "throw", "switch", "where", "while", "as", "false", "is", "nil", "super", "self", "Self", "throws",
        "true", "try", "Any", "Protocol", "Type", "await", "async", "package", "consume", "borrowing",
        "consuming", "some", "any",
    ]

    static func escaped(_ name: String) -> String {
        keywords.contains(name) ? "`\(name)`" : name
    }

    static func words(_ wire: String) -> [String] {
        var words: [String] = []
        var current = ""
        var previous: Character?
        let characters = Array(wire)
        for (index, character) in characters.enumerated() {
            guard character.isASCII, character.isLetter || character.isNumber else {
                if !current.isEmpty { words.append(current) }
                current = ""
                previous = nil
                continue
            }
            if let previous, !current.isEmpty {
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                let lowerToUpper = (previous.isLowercase || previous.isNumber) && character.isUppercase
                // `HTTPServer`: the `S` starts a word when a lower-case letter follows it.
                let acronymEnd = previous.isUppercase && character.isUppercase && (next?.isLowercase ?? false)
                if lowerToUpper || acronymEnd {
                    words.append(current)
                    current = ""
                }
            }
            current.append(character)
            previous = character
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    private static func capitalised(_ word: String) -> String {
        let lower = word.allSatisfy { $0.isUppercase || $0.isNumber } && word.count > 1 ? word.lowercased() : word
        return lower.prefix(1).uppercased() + lower.dropFirst()
    }

    private static func lowercasedWord(_ word: String) -> String {
        if word.allSatisfy({ $0.isUppercase || $0.isNumber }) { return word.lowercased() }
        return word.prefix(1).lowercased() + word.dropFirst()
    }

    private static func startsWithDigit(_ name: String) -> Bool {
        name.first?.isNumber ?? false
    }
}
