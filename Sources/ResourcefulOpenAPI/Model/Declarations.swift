import Foundation

/// A type the generator declares: a schema's struct, enum or alias, or a type nested in one.
indirect enum Declaration: Sendable {
    case object(ObjectDeclaration)
    case enumeration(EnumDeclaration)
    case union(UnionDeclaration)
    case alias(AliasDeclaration)

    var name: String {
        switch self {
        case .object(let object): object.name
        case .enumeration(let enumeration): enumeration.name
        case .union(let union): union.name
        case .alias(let alias): alias.name
        }
    }
}

/// A documentation comment's paragraphs and where the declaration comes from.
struct Documentation: Sendable, Equatable {
    var paragraphs: [String] = []

    init(_ paragraphs: [String?] = []) {
        self.paragraphs = paragraphs.compactMap { text in
            guard let text = text?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else { return nil }
            return text
        }
    }
}

/// One stored property and the key it has on the wire.
struct Property: Sendable {
    var wireName: String
    var swiftName: String
    var type: SwiftType
    var documentation: Documentation
}

/// A struct (a `final class` when it contains itself) for an object schema.
struct ObjectDeclaration: Sendable {
    var name: String
    var documentation: Documentation
    var properties: [Property]
    var nested: [Declaration]
    /// Stored inline in itself through other types: declared as a `final class`.
    var isRecursive = false
    /// Holds a file for a multipart body: `Encodable` only, as ``MultipartFile`` is.
    var isEncodableOnly = false
}

/// An enum for a schema's `enum` values, with a case for a value the document does not list.
struct EnumDeclaration: Sendable {
    enum Raw: String, Sendable { case string = "String", integer = "Int" }
    var name: String
    var documentation: Documentation
    var raw: Raw
    /// Swift case name and wire value, in the document's order.
    var cases: [(name: String, value: String)]
}

/// An enum for `oneOf` / `anyOf`: one case per alternative.
struct UnionDeclaration: Sendable {
    struct Alternative: Sendable {
        var caseName: String
        var type: SwiftType
        /// The discriminator's values that select this alternative.
        var tags: [String]
        /// How many properties the alternative requires: without a discriminator, the strictest
        /// alternatives are tried first, so that one whose properties are all optional does not
        /// take every object.
        var strictness = 0
    }
    var name: String
    var documentation: Documentation
    var alternatives: [Alternative]
    /// The property whose value picks the alternative, if the document names one.
    var discriminator: String?
    var nested: [Declaration]
    var isRecursive = false
    /// An error body's enum: `Decodable` only, as ``ProblemDetails`` is.
    var isDecodableOnly = false
}

/// A `typealias` for a schema that is another type under a new name.
struct AliasDeclaration: Sendable {
    var name: String
    var documentation: Documentation
    var type: SwiftType
    /// Inline types the aliased type uses (an array's element object), declared beside it.
    var companions: [Declaration] = []
}
