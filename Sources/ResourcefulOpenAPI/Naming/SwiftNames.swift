/// Swift names from the names an OpenAPI document uses on the wire.
///
/// Words are split at anything that is not a letter or a digit and at a lower-to-upper case change
/// (`pet_id`, `pet-id`, `petId` and `PetID` are all the words `pet` and `id`); letters outside ASCII
/// stay when Swift takes them in an identifier (`größe` → `größe`). Type names join the
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
            guard character.isASCII ? character.isLetter || character.isNumber : Self.isIdentifierLetter(character) else {
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

    /// A letter outside ASCII that Swift takes in an identifier (`é`, `ß`, `名`): its first scalar
    /// may start one, the others (combining marks) may follow.
    static func isIdentifierLetter(_ character: Character) -> Bool {
        guard character.isLetter, let first = character.unicodeScalars.first else { return false }
        return identifierHead.contains { $0.contains(first.value) }
            && character.unicodeScalars.dropFirst().allSatisfy { scalar in
                identifierCharacter.contains { $0.contains(scalar.value) }
            }
    }

    /// The scalars above ASCII that may start a Swift identifier (The Swift Programming Language,
    /// Lexical Structure: identifier-head).
    private static let identifierHead: [ClosedRange<UInt32>] = [
        0xA8...0xA8, 0xAA...0xAA, 0xAD...0xAD, 0xAF...0xAF, 0xB2...0xB5, 0xB7...0xBA, 0xBC...0xBE,
        0xC0...0xD6, 0xD8...0xF6, 0xF8...0xFF, 0x100...0x2FF, 0x370...0x167F, 0x1681...0x180D,
        0x180F...0x1DBF, 0x1E00...0x1FFF, 0x200B...0x200D, 0x202A...0x202E, 0x203F...0x2040,
        0x2054...0x2054, 0x2060...0x206F, 0x2070...0x20CF, 0x2100...0x218F, 0x2460...0x24FF,
        0x2776...0x2793, 0x2C00...0x2DFF, 0x2E80...0x2FFF, 0x3004...0x3007, 0x3021...0x302F,
        0x3031...0x303F, 0x3040...0xD7FF, 0xF900...0xFD3D, 0xFD40...0xFDCF, 0xFDF0...0xFE1F,
        0xFE30...0xFE44, 0xFE47...0xFFFD, 0x10000...0x1FFFD, 0x20000...0x2FFFD, 0x30000...0x3FFFD,
        0x40000...0x4FFFD, 0x50000...0x5FFFD, 0x60000...0x6FFFD, 0x70000...0x7FFFD, 0x80000...0x8FFFD,
        0x90000...0x9FFFD, 0xA0000...0xAFFFD, 0xB0000...0xBFFFD, 0xC0000...0xCFFFD, 0xD0000...0xDFFFD,
        0xE0000...0xEFFFD,
    ]

    /// The scalars above ASCII that may follow in an identifier: the heads, and combining marks
    /// (identifier-character).
    private static let identifierCharacter: [ClosedRange<UInt32>] = identifierHead + [
        0x300...0x36F, 0x1DC0...0x1DFF, 0x20D0...0x20FF, 0xFE20...0xFE2F,
    ]

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
