internal import OpenAPIKit

/// Turns JSON schemas into Swift types, declaring a type for each inline object, enum and union.
///
/// Each mapping rule is documented on ``OpenAPIGenerator``. What a rule cannot express becomes a
/// ``OpenAPIDiagnostic`` and the most faithful type that still decodes (``JSONValueRenderer``'s
/// `JSONValue` for anything at all).
struct SchemaTranslator {
    let components: OpenAPI.Components
    let names: TypeNames
    var diagnostics: [OpenAPIDiagnostic] = []
    /// Whether any type uses the generated `JSONValue`.
    var usesJSONValue = false
    /// Whether `format: binary` is a file (in a multipart body) rather than text.
    var binaryAsFile = false

    init(components: OpenAPI.Components, names: TypeNames) {
        self.components = components
        self.names = names
    }

    mutating func report(_ pointer: JSONPointer, _ message: String) {
        diagnostics.append(OpenAPIDiagnostic(pointer: pointer.description, message: message))
    }

    // MARK: Component schemas

    /// The declaration for the component schema `key`.
    mutating func declaration(forComponent key: String, schema: JSONSchema) -> Declaration {
        let name = names.schemaType(key)
        let pointer = JSONPointer.root.appending("components").appending("schemas").appending(key)
        var nested: [Declaration] = []
        let documentation = Documentation([schema.title, schema.description])
        if referencesItself(key) {
            report(pointer, "the schema is only a reference back to itself; it is JSONValue")
            return .alias(AliasDeclaration(name: name, documentation: documentation, type: jsonValue()))
        }
        if let declaration = inlineDeclaration(for: schema, name: name, documentation: documentation, at: pointer) {
            return declaration
        }
        let type = nonNullableType(for: schema, name: name, at: pointer, nested: &nested)
        if type == .named(name), let own = nested.first(where: { $0.name == name }) {
            return own  // an enum schema: the enum is the declaration
        }
        return .alias(AliasDeclaration(name: name, documentation: documentation, type: type, companions: nested))
    }

    /// Whether the component `key` is a chain of plain references that comes back to it, which no
    /// type can be.
    private func referencesItself(_ key: String) -> Bool {
        var current = key
        var seen: Set<String> = []
        while seen.insert(current).inserted {
            let schema = components.schemas[OpenAPI.ComponentKey(stringLiteral: current)]
            guard let schema, case .reference(.internal(.component(let next)), _) = schema.value else { return false }
            if next == key { return true }
            current = next
        }
        return false
    }

    /// Whether `schema` is a reference to a component that allows `null`.
    func isNullableReference(_ schema: JSONSchema) -> Bool {
        guard case .reference(.internal(.component(let key)), _) = schema.value else { return false }
        return components.schemas[OpenAPI.ComponentKey(stringLiteral: key)]?.nullable ?? false
    }

    // MARK: Schemas at a position

    /// The Swift type of a value with `schema`, declaring inline types named `name` into `nested`.
    /// Optional when the schema is nullable; a property's own optionality is the caller's.
    mutating func type(for schema: JSONSchema, name: String, at pointer: JSONPointer, nested: inout [Declaration]) -> SwiftType {
        let base = nonNullableType(for: schema, name: name, at: pointer, nested: &nested)
        return schema.nullable ? base.optional : base
    }

    private mutating func nonNullableType(for schema: JSONSchema, name: String, at pointer: JSONPointer, nested: inout [Declaration]) -> SwiftType {
        switch schema.value {
        case .reference(let reference, _):
            return referenced(reference, at: pointer)
        case .boolean:
            return .named("Bool")
        case .integer(let core, _):
            if let values = core.allowedValues, !values.isEmpty {
                return enumType(values, raw: .integer, name: name, documentation: Documentation([core.description]), at: pointer, nested: &nested)
            }
            switch core.formatString {
            case "int32": return .named("Int32")
            case "int64": return .named("Int64")
            default: return .named("Int")
            }
        case .number(let core, _):
            if core.allowedValues != nil {
                report(pointer.appending("enum"), "a number enum is not expressed; the value is a plain Double")
            }
            return core.formatString == "float" ? .named("Float") : .named("Double")
        case .string(let core, _):
            if let values = core.allowedValues, !values.isEmpty {
                return enumType(values, raw: .string, name: name, documentation: Documentation([core.description]), at: pointer, nested: &nested)
            }
            return stringType(format: core.formatString)
        case .null:
            return .json.optional
        case .array(_, let array):
            if array.prefixItems != nil {
                report(pointer.appending("prefixItems"), "tuple items are not expressed; the elements are JSONValue")
                return .array(jsonValue())
            }
            guard let items = array.items else { return .array(jsonValue()) }
            return .array(type(for: items, name: name + "Item", at: pointer.appending("items"), nested: &nested))
        case .object(_, let object):
            if object.properties.isEmpty {
                return dictionaryType(object, name: name, at: pointer, nested: &nested)
            }
            nested.append(.object(objectDeclaration(schema, name: name, documentation: Documentation([schema.description]), at: pointer)))
            return .named(name)
        case .all, .one, .any:
            guard let declaration = inlineDeclaration(for: schema, name: name, documentation: Documentation([schema.description]), at: pointer) else {
                return jsonValue()
            }
            if case .alias(let alias) = declaration {
                nested.append(contentsOf: alias.companions)
                return alias.type
            }
            nested.append(declaration)
            return .named(name)
        case .not:
            report(pointer.appending("not"), "`not` is not expressed; the value is JSONValue")
            return jsonValue()
        case .fragment(let core):
            if let values = core.allowedValues, !values.isEmpty, values.allSatisfy({ $0.value is String }) {
                return enumType(values, raw: .string, name: name, documentation: Documentation([core.description]), at: pointer, nested: &nested)
            }
            return jsonValue()
        }
    }

    /// The declaration for an object, `allOf`, `oneOf` or `anyOf` schema named `name`; nil for any
    /// other schema (those are a plain type, not a declaration).
    mutating func inlineDeclaration(for schema: JSONSchema, name: String, documentation: Documentation, at pointer: JSONPointer) -> Declaration? {
        switch schema.value {
        case .object(_, let object) where !object.properties.isEmpty:
            return .object(objectDeclaration(schema, name: name, documentation: documentation, at: pointer))
        case .all(let parts, _):
            return allOf(parts, schema: schema, name: name, documentation: documentation, at: pointer)
        case .one(let alternatives, _):
            return union(alternatives, schema: schema, keyword: "oneOf", name: name, documentation: documentation, at: pointer)
        case .any(let alternatives, _):
            return union(alternatives, schema: schema, keyword: "anyOf", name: name, documentation: documentation, at: pointer)
        default:
            return nil
        }
    }

    // MARK: Plain types

    private func stringType(format: String?) -> SwiftType {
        switch format {
        case "binary" where binaryAsFile: .named("MultipartFile")
        case "date-time": .named("Date")
        case "uuid": .named("UUID")
        default: .string
        }
    }

    mutating func jsonValue() -> SwiftType {
        usesJSONValue = true
        return .json
    }

    private mutating func referenced(_ reference: JSONReference<JSONSchema>, at pointer: JSONPointer) -> SwiftType {
        if case .internal(.component(let key)) = reference, components.schemas[OpenAPI.ComponentKey(stringLiteral: key)] != nil {
            return .named(names.schemaType(key))
        }
        report(pointer, "the reference \(reference.absoluteString) is not a schema of this document's components; the value is JSONValue")
        return jsonValue()
    }

    private mutating func dictionaryType(_ object: JSONSchema.ObjectContext, name: String, at pointer: JSONPointer, nested: inout [Declaration]) -> SwiftType {
        switch object.additionalProperties {
        case .b(let schema):
            return .dictionary(type(for: schema, name: name + "Value", at: pointer.appending("additionalProperties"), nested: &nested))
        case .a(false):
            report(pointer, "an object with no properties and no additional properties is decoded as an empty dictionary")
            return .dictionary(jsonValue())
        case .a(true), nil:
            return .dictionary(jsonValue())
        }
    }

    // MARK: Enums

    private mutating func enumType(
        _ values: [AnyCodable],
        raw: EnumDeclaration.Raw,
        name: String,
        documentation: Documentation,
        at pointer: JSONPointer,
        nested: inout [Declaration]
    ) -> SwiftType {
        guard let declaration = enumDeclaration(values, raw: raw, name: name, documentation: documentation, at: pointer) else {
            return raw == .string ? .string : .named("Int")
        }
        nested.append(.enumeration(declaration))
        return .named(name)
    }

    mutating func enumDeclaration(
        _ values: [AnyCodable],
        raw: EnumDeclaration.Raw,
        name: String,
        documentation: Documentation,
        at pointer: JSONPointer
    ) -> EnumDeclaration? {
        var cases: [(name: String, value: String)] = []
        var used: UniqueNames = ["unknown"]
        var seen: Set<String> = []
        for value in values {
            let text: String
            switch (raw, value.value) {
            case (.string, let string as String): text = string
            case (.integer, let integer as Int): text = String(integer)
            case (_, Optional<Any>.none), (_, is Void): continue  // `null` in a nullable enum
            default:
                report(pointer.appending("enum"), "the value \(value) does not fit a \(raw.rawValue) enum; it is left out")
                continue
            }
            guard seen.insert(text).inserted else { continue }
            let base = SwiftNames.bare(raw == .integer ? "_" + text.replacingMinus() : SwiftNames.caseName(text))
            cases.append((SwiftNames.escaped(used.claim(base)), text))
        }
        guard !cases.isEmpty else { return nil }
        return EnumDeclaration(name: name, documentation: documentation, raw: raw, cases: cases)
    }
}

extension String {
    /// `-1` → `minus1`, as a case name cannot hold a minus sign.
    fileprivate func replacingMinus() -> String {
        hasPrefix("-") ? "minus" + dropFirst() : self
    }
}
