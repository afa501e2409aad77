internal import OpenAPIKit

extension SchemaTranslator {
    /// `oneOf` / `anyOf`: an enum with a case per alternative. With a discriminator, its value
    /// picks the case; without, the first alternative that decodes wins. `null` among the
    /// alternatives makes the value optional; a single other alternative is that type.
    mutating func union(
        _ alternatives: [JSONSchema],
        schema: JSONSchema,
        keyword: String,
        name: String,
        documentation: Documentation,
        at pointer: JSONPointer
    ) -> Declaration {
        let indexed = alternatives.enumerated().filter { !$0.element.isNull }
        let allowsNull = indexed.count < alternatives.count
        var nested: [Declaration] = []
        if indexed.count == 1 {
            let only = indexed[0]
            var type = self.type(for: only.element, name: name, at: pointer.appending(keyword).appending(only.offset), nested: &nested)
            if allowsNull { type = type.optional }
            if type == .named(name), let own = nested.first(where: { $0.name == name }) { return own }
            return .alias(AliasDeclaration(name: name, documentation: documentation, type: type, companions: nested))
        }
        guard !indexed.isEmpty else {
            return .alias(AliasDeclaration(name: name, documentation: documentation, type: jsonValue().optional))
        }
        let discriminator = schema.discriminator
        var result: [UnionDeclaration.Alternative] = []
        var caseNames: UniqueNames = ["unknown"]
        var typeNames: UniqueNames = [name, "CodingKeys"]
        for (offset, alternative) in indexed {
            let place = pointer.appending(keyword).appending(offset)
            if case .reference(.internal(.component(let key)), _) = alternative.value {
                let type = self.type(for: alternative, name: name, at: place, nested: &nested)
                let caseName = caseNames.claim(SwiftNames.memberName(key))
                result.append(.init(caseName: caseName, type: type, tags: discriminator.map { tags(for: key, in: $0) } ?? [], strictness: strictness(of: alternative)))
                continue
            }
            let label = alternative.title ?? Self.label(for: alternative) ?? "option\(offset + 1)"
            let typeName = nestedTypeName(for: label, in: &typeNames)
            let type = self.type(for: alternative, name: typeName, at: place, nested: &nested)
            let caseName = caseNames.claim(SwiftNames.memberName(label))
            if discriminator != nil {
                report(place, "an inline alternative has no discriminator value; it is chosen by decoding, after the tagged ones")
            }
            result.append(.init(caseName: caseName, type: type, tags: [], strictness: strictness(of: alternative)))
        }
        let union = UnionDeclaration(
            name: name,
            documentation: documentation,
            alternatives: result,
            discriminator: discriminator?.propertyName,
            nested: nested
        )
        guard allowsNull else { return .union(union) }
        // `null` allowed: the union under a name of its own, the schema's name an optional of it.
        var wrapped = union
        wrapped.name = name + "Value"
        return .alias(AliasDeclaration(name: name, documentation: documentation, type: .optional(.named(wrapped.name)), companions: [.union(wrapped)]))
    }

    /// How many properties a value of `schema` must have (through references and `allOf`).
    func strictness(of schema: JSONSchema, depth: Int = 0) -> Int {
        guard depth < 8 else { return 0 }
        switch schema.value {
        case .reference(.internal(.component(let key)), _):
            return components.schemas[OpenAPI.ComponentKey(stringLiteral: key)].map { strictness(of: $0, depth: depth + 1) } ?? 0
        case .object(_, let object):
            return object.requiredProperties.count
        case .all(let parts, _):
            return parts.reduce(0) { $0 + strictness(of: $1, depth: depth + 1) }
        default:
            return 0
        }
    }

    /// The discriminator values that select the component `key`: its mapping entries, or its name.
    private func tags(for key: String, in discriminator: OpenAPI.Discriminator) -> [String] {
        let mapped = (discriminator.mapping ?? [:]).compactMap { value, target -> String? in
            target == key || target.hasSuffix("/" + key) ? value : nil
        }
        return mapped.isEmpty ? [key] : mapped
    }

    /// A case label for an inline alternative of a plain type: `string`, `integer`…
    private static func label(for schema: JSONSchema) -> String? {
        switch schema.value {
        case .string: "string"
        case .integer: "integer"
        case .number: "number"
        case .boolean: "boolean"
        case .array: "array"
        case .object: nil
        default: nil
        }
    }
}

extension JSONSchema {
    /// `{type: null}`, an alternative that only allows `null`.
    fileprivate var isNull: Bool {
        if case .null = value { true } else { false }
    }
}
