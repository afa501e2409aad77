/// Writes the schema declarations: structs (or final classes), enums with an unknown case,
/// unions and aliases.
struct DeclarationRenderer {
    /// `public `, `package ` or empty.
    let access: String

    func render(_ declaration: Declaration, into writer: inout CodeWriter) {
        switch declaration {
        case .object(let object): render(object, into: &writer)
        case .enumeration(let enumeration): render(enumeration, into: &writer)
        case .union(let union): render(union, into: &writer)
        case .alias(let alias):
            writer.documentation(alias.documentation)
            writer.line("\(access)typealias \(alias.name) = \(alias.type.code)")
            for companion in alias.companions {
                writer.line()
                render(companion, into: &writer)
            }
        }
    }

    // MARK: Objects

    private func render(_ object: ObjectDeclaration, into writer: inout CodeWriter) {
        let conformances = object.isEncodableOnly ? "Encodable, Hashable, Sendable" : "Codable, Hashable, Sendable"
        let kind = object.isRecursive ? "final class" : "struct"
        let binding = object.isRecursive ? "let" : "var"
        writer.documentation(object.documentation)
        writer.block("\(access)\(kind) \(object.name): \(conformances)") { writer in
            for property in object.properties {
                writer.documentation(property.documentation)
                writer.line("\(access)\(binding) \(property.swiftName): \(property.type.code)")
            }
            if !object.properties.isEmpty { writer.line() }
            renderInitialiser(object, into: &writer)
            if object.properties.contains(where: { SwiftNames.bare($0.swiftName) != $0.wireName }) {
                writer.line()
                renderCodingKeys(object.properties, into: &writer)
            }
            if object.isRecursive {
                writer.line()
                renderEquality(object, into: &writer)
            }
            for nested in object.nested {
                writer.line()
                render(nested, into: &writer)
            }
        }
    }

    private func renderInitialiser(_ object: ObjectDeclaration, into writer: inout CodeWriter) {
        let arguments = object.properties.map { property in
            "\(Self.parameter(property.swiftName)): \(property.type.code)" + (property.type.isOptional ? " = nil" : "")
        }
        writer.documentation(Documentation(["A value with each property."]))
        guard !arguments.isEmpty else {
            writer.line("\(access)init() {}")
            return
        }
        writer.block("\(access)init(\(arguments.joined(separator: ", ")))") { writer in
            for property in object.properties {
                writer.line("self.\(property.swiftName) = \(Self.argument(property.swiftName))")
            }
        }
    }

    /// An initialiser parameter for a property: a property named `self` takes its value as
    /// `selfValue`, which does not hide `self`.
    static func parameter(_ name: String) -> String {
        name == "`self`" ? "`self` selfValue" : name
    }

    static func argument(_ name: String) -> String {
        name == "`self`" ? "selfValue" : name
    }

    func renderCodingKeys(_ properties: [Property], into writer: inout CodeWriter) {
        writer.block("enum CodingKeys: String, CodingKey") { writer in
            for property in properties {
                if SwiftNames.bare(property.swiftName) == property.wireName {
                    writer.line("case \(property.swiftName)")
                } else {
                    writer.line("case \(property.swiftName) = \(swiftStringLiteral(property.wireName))")
                }
            }
        }
    }

    /// A class has no synthesized equality: compare and hash every property.
    private func renderEquality(_ object: ObjectDeclaration, into writer: inout CodeWriter) {
        let names = object.properties.map(\.swiftName)
        writer.documentation(Documentation(["Whether every property is equal."]))
        writer.block("\(access)static func == (lhs: \(object.name), rhs: \(object.name)) -> Bool") { writer in
            writer.line(names.isEmpty ? "true" : names.map { "lhs.\($0) == rhs.\($0)" }.joined(separator: " && "))
        }
        writer.line()
        writer.documentation(Documentation(["Hashes every property."]))
        writer.block("\(access)func hash(into hasher: inout Hasher)") { writer in
            for name in names { writer.line("hasher.combine(\(name))") }
        }
    }

    // MARK: Enums

    private func render(_ enumeration: EnumDeclaration, into writer: inout CodeWriter) {
        let raw = enumeration.raw.rawValue
        let literal: (String) -> String = { enumeration.raw == .string ? swiftStringLiteral($0) : $0 }
        writer.documentation(enumeration.documentation)
        writer.block("\(access)enum \(enumeration.name): Codable, Hashable, Sendable, CustomStringConvertible") { writer in
            for item in enumeration.cases {
                writer.line("case \(item.name)")
            }
            writer.documentation(Documentation(["A value the document does not list, kept as it came."]))
            writer.line("case unknown(\(raw))")
            writer.line()
            writer.documentation(Documentation(["The case for `rawValue`: ``unknown(_:)`` for a value the document does not list."]))
            writer.block("\(access)init(rawValue: \(raw))") { writer in
                writer.switchBlock("rawValue") { writer in
                    for item in enumeration.cases {
                        writer.line("case \(literal(item.value)): self = .\(item.name)")
                    }
                    writer.line("default: self = .unknown(rawValue)")
                }
            }
            writer.line()
            writer.documentation(Documentation(["The value on the wire."]))
            writer.block("\(access)var rawValue: \(raw)") { writer in
                writer.switchBlock("self") { writer in
                    for item in enumeration.cases {
                        writer.line("case .\(item.name): \(literal(item.value))")
                    }
                    writer.line("case .unknown(let value): value")
                }
            }
            writer.line()
            writer.documentation(Documentation(["The value on the wire, as text."]))
            writer.line("\(access)var description: String { \(enumeration.raw == .string ? "rawValue" : "String(rawValue)") }")
            writer.line()
            writer.documentation(Documentation(["Decodes any value of the raw type; one the document does not list is ``unknown(_:)``."]))
            writer.block("\(access)init(from decoder: any Decoder) throws") { writer in
                writer.line("self.init(rawValue: try decoder.singleValueContainer().decode(\(raw).self))")
            }
            writer.line()
            writer.documentation(Documentation(["Encodes the raw value."]))
            writer.block("\(access)func encode(to encoder: any Encoder) throws") { writer in
                writer.line("var container = encoder.singleValueContainer()")
                writer.line("try container.encode(rawValue)")
            }
        }
    }

    // MARK: Unions

    private func render(_ union: UnionDeclaration, into writer: inout CodeWriter) {
        writer.documentation(union.documentation)
        let kind = union.isRecursive ? "indirect enum" : "enum"
        let conformances = union.isDecodableOnly ? "Decodable, Sendable" : "Codable, Hashable, Sendable"
        writer.block("\(access)\(kind) \(union.name): \(conformances)") { writer in
            for alternative in union.alternatives {
                writer.line("case \(alternative.caseName)(\(alternative.type.code))")
            }
            writer.line()
            renderUnionDecoding(union, into: &writer)
            if !union.isDecodableOnly {
                writer.line()
                writer.documentation(Documentation(["Encodes the alternative's value."]))
                writer.block("\(access)func encode(to encoder: any Encoder) throws") { writer in
                    writer.switchBlock("self") { writer in
                        for alternative in union.alternatives {
                            writer.line("case .\(alternative.caseName)(let value): try value.encode(to: encoder)")
                        }
                    }
                }
            }
            if let discriminator = union.discriminator {
                writer.line()
                writer.block("private enum DiscriminatorKey: String, CodingKey") { writer in
                    writer.line("case discriminator = \(swiftStringLiteral(discriminator))")
                }
            }
            for nested in union.nested {
                writer.line()
                render(nested, into: &writer)
            }
        }
    }

    private func renderUnionDecoding(_ union: UnionDeclaration, into writer: inout CodeWriter) {
        let tagged = union.alternatives.filter { !$0.tags.isEmpty }
        let untagged = union.alternatives.enumerated()
            .filter { $0.element.tags.isEmpty }
            .sorted { ($0.element.strictness, -$0.offset) > ($1.element.strictness, -$1.offset) }
            .map(\.element)
        let names = untagged.map { $0.type.code }.joined(separator: ", ")
        if let discriminator = union.discriminator, !tagged.isEmpty {
            writer.documentation(Documentation(["Decodes the alternative that the `\(discriminator)` property names."]))
        } else {
            writer.documentation(Documentation(["Decodes the first alternative that fits: \(names)."]))
        }
        writer.block("\(access)init(from decoder: any Decoder) throws") { writer in
            if union.discriminator != nil, !tagged.isEmpty {
                writer.line("let container = try decoder.container(keyedBy: DiscriminatorKey.self)")
                writer.line("let tag = try container.decode(String.self, forKey: .discriminator)")
                writer.switchBlock("tag") { writer in
                    for alternative in tagged {
                        let tags = alternative.tags.map(swiftStringLiteral).joined(separator: ", ")
                        writer.line("case \(tags):")
                        writer.line("    self = .\(alternative.caseName)(try \(alternative.type.initialiser)(from: decoder))")
                        writer.line("    return")
                    }
                    writer.line("default:")
                    writer.line("    break")
                }
            }
            for alternative in untagged {
                writer.block("if let value = try? \(alternative.type.initialiser)(from: decoder)") { writer in
                    writer.line("self = .\(alternative.caseName)(value)")
                    writer.line("return")
                }
            }
            if union.discriminator != nil, !tagged.isEmpty {
                writer.line("throw DecodingError.dataCorruptedError(")
                writer.line("    forKey: .discriminator, in: container,")
                writer.line("    debugDescription: \"no alternative of \(union.name) has the discriminator value \\(tag)\"")
                writer.line(")")
            } else {
                writer.line("throw DecodingError.dataCorrupted(")
                writer.line("    .init(codingPath: decoder.codingPath, debugDescription: \"the value fits none of \(names)\")")
                writer.line(")")
            }
        }
    }
}

extension SwiftType {
    /// The type as the receiver of `init(from:)`: `Optional<T>` where the declaration says `T?`.
    var initialiser: String {
        if case .optional(let wrapped) = self { "Optional<\(wrapped.unwrapped.code)>" } else { code }
    }
}
