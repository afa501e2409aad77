internal import OpenAPIKit

extension SchemaTranslator {
    /// One property of an object schema, with whether the object requires it.
    struct Field {
        var key: String
        var schema: JSONSchema
        var isRequired: Bool
        var pointer: JSONPointer
        /// What documents the field when it is not its schema's own description: a parameter's.
        var description: String? = nil
    }

    /// A struct for an object schema: a property per schema property, optional unless required
    /// and not nullable.
    mutating func objectDeclaration(_ schema: JSONSchema, name: String, documentation: Documentation, at pointer: JSONPointer) -> ObjectDeclaration {
        guard case .object(_, let object) = schema.value else {
            return ObjectDeclaration(name: name, documentation: documentation, properties: [], nested: [])
        }
        let fields = object.properties.pairs.map { key, property in
            Field(key: key, schema: property, isRequired: property.required, pointer: pointer.appending("properties").appending(key))
        }
        if case .b = object.additionalProperties {
            report(pointer.appending("additionalProperties"), "additional properties beside the declared ones are not kept")
        }
        return objectDeclaration(fields, name: name, documentation: documentation)
    }

    /// A struct with a property per field, in order.
    mutating func objectDeclaration(_ fields: [Field], name: String, documentation: Documentation, reserving reserved: Set<String> = []) -> ObjectDeclaration {
        var properties: [Property] = []
        var nested: [Declaration] = []
        var memberNames: UniqueNames = []
        var typeNames = UniqueNames(reserved.union([name, "CodingKeys"]))
        for field in fields {
            let swiftName = memberNames.claim(SwiftNames.memberName(field.key))
            let typeName = nestedTypeName(for: field.key, in: &typeNames)
            var type = self.type(for: field.schema, name: typeName, at: field.pointer, nested: &nested)
            if !field.isRequired || isNullableReference(field.schema) { type = type.optional }
            properties.append(Property(
                wireName: field.key,
                swiftName: swiftName,
                type: type,
                documentation: Documentation([field.schema.title, field.description ?? field.schema.description])
            ))
        }
        return ObjectDeclaration(name: name, documentation: documentation, properties: properties, nested: nested)
    }

    /// A type name for an inline type nested in a declaration: not one of its siblings' names,
    /// nor a top-level name it would hide.
    func nestedTypeName(for wire: String, in used: inout UniqueNames) -> String {
        var base = SwiftNames.typeName(wire)
        if names.isTopLevel(base) || TypeNames.reserved.contains(base) { base += "Value" }
        return used.claim(base)
    }

    // MARK: allOf

    /// `allOf`: one struct with the properties of every part, a property required when any part
    /// requires it. A single referenced part (a description added to a reference) is that type.
    mutating func allOf(_ parts: [JSONSchema], schema: JSONSchema, name: String, documentation: Documentation, at pointer: JSONPointer) -> Declaration {
        if parts.count == 1, case .reference = parts[0].value {
            var nested: [Declaration] = []
            let type = self.type(for: parts[0], name: name, at: pointer.appending("allOf").appending(0), nested: &nested)
            return .alias(AliasDeclaration(name: name, documentation: documentation, type: type, companions: nested))
        }
        // Parts that are all one plain type (a string and its constraints): that type.
        let plain = parts.filter { !$0.isFragment }
        if !plain.isEmpty, plain.allSatisfy({ Self.isPlainValue($0) }), Set(plain.map(\.jsonType)).count == 1 {
            var nested: [Declaration] = []
            let type = self.type(for: plain[0], name: name, at: pointer.appending("allOf").appending(0), nested: &nested)
            if type == .named(name), let own = nested.first(where: { $0.name == name }) { return own }
            return .alias(AliasDeclaration(name: name, documentation: documentation, type: type, companions: nested))
        }
        let fields = merged(parts, at: pointer.appending("allOf"))
        if fields.isEmpty, !plain.isEmpty {
            // Nothing merged (a string and an integer): any value.
            return .alias(AliasDeclaration(name: name, documentation: documentation, type: jsonValue()))
        }
        return .object(objectDeclaration(fields, name: name, documentation: documentation))
    }

    private static func isPlainValue(_ schema: JSONSchema) -> Bool {
        switch schema.value {
        case .string, .integer, .number, .boolean: true
        default: false
        }
    }

    /// The properties of the `allOf` parts at `pointer`, merged in document order: a later part's
    /// property replaces an earlier one's of the same name, required when either is.
    ///
    /// A loop over pending parts, not recursion, and a dictionary of names, not a search: a chain
    /// of `allOf` references may be as long as the document makes it.
    private mutating func merged(_ parts: [JSONSchema], at pointer: JSONPointer) -> [Field] {
        var fields: [Field] = []
        var indices: [String: Int] = [:]
        var visited: Set<String> = []
        var pending = parts.enumerated().reversed().map { ($1, pointer.appending($0)) }
        while let (schema, pointer) = pending.popLast() {
            switch schema.value {
            case .reference(.internal(.component(let key)), _):
                guard visited.insert(key).inserted,
                      let target = components.schemas[OpenAPI.ComponentKey(stringLiteral: key)]
                else { continue }
                pending.append((target, JSONPointer.root.appending("components").appending("schemas").appending(key)))
            case .object(_, let object):
                for (key, property) in object.properties {
                    var field = Field(key: key, schema: property, isRequired: property.required, pointer: pointer.appending("properties").appending(key))
                    if let index = indices[key] {
                        field.isRequired = field.isRequired || fields[index].isRequired
                        fields[index] = field
                    } else {
                        indices[key] = fields.count
                        fields.append(field)
                    }
                }
            case .all(let parts, _):
                // Reversed onto the stack, so the first part is merged first.
                pending.append(contentsOf: parts.enumerated().reversed().map { ($1, pointer.appending("allOf").appending($0)) })
            case .fragment:
                continue  // a description or `required` list beside the parts: nothing to add
            default:
                report(pointer, "an allOf part that is not an object is not merged with the others")
            }
        }
        return fields
    }
}
