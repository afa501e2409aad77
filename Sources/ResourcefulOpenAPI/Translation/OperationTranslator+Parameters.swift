internal import OpenAPIKit

extension OperationTranslator {
    /// Names a request already has as members, which a header parameter's stored property must
    /// not take.
    static let requestMembers: Set<String> = [
        "verb", "path", "parameters", "query", "headers", "updateMethod", "bodyEncoding", "timeout",
        "requestEncoder", "responseDecoder", "allowsRetries", "retryPolicy", "shouldRedactRequestBody",
        "shouldRedactResponseBody", "sendsBodyAcrossOrigins", "arrayFormat", "configure",
    ]

    /// Path parameters become labelled arguments interpolated into the path (one encoded segment
    /// each); query parameters the request's `Query`; header parameters stored properties sent in
    /// `headers`. Cookie parameters are reported.
    mutating func parameters(of operation: OpenAPI.Operation, pathItem: OpenAPI.PathItem, path: OpenAPI.Path, into context: inout Context) {
        var parameters: [(parameter: OpenAPI.Parameter, pointer: JSONPointer)] = []
        let pathPointer = JSONPointer.root.appending("paths").appending(path.rawValue)
        for (source, pointer) in [(pathItem.parameters, pathPointer), (operation.parameters, context.pointer)] {
            for (index, either) in source.enumerated() {
                let place = pointer.appending("parameters").appending(index)
                guard let parameter = try? document.components.lookup(either) else {
                    schemas.report(place, "the parameter's reference does not resolve; it is left out")
                    continue
                }
                parameters.append((parameter, place))
            }
        }
        // An operation's parameter replaces the path item's of the same name and location: the
        // last of each is kept, in the order of those last ones.
        var last: [ParameterKey: Int] = [:]
        for (index, entry) in parameters.enumerated() { last[ParameterKey(entry.parameter)] = index }
        parameters = parameters.enumerated().filter { last[ParameterKey($0.element.parameter)] == $0.offset }.map(\.element)

        var queryFields: [SchemaTranslator.Field] = []
        var formats: [String] = []
        var pathArguments: [String: String] = [:]
        for (parameter, pointer) in parameters {
            guard let schema = schema(of: parameter, at: pointer) else { continue }
            switch parameter.location {
            case .path:
                if case .a(let style) = parameter.schemaOrContent, style.style != .simple {
                    schemas.report(pointer, "`style: \(style.style.rawValue)` is not expressed; the value is one plain path segment")
                }
                let label = context.labels.claim(SwiftNames.memberName(parameter.name))
                let type = pathType(schema, name: parameter.name, at: pointer.appending("schema"), into: &context)
                context.request.arguments.append(.init(label: label, type: type, documentation: parameter.description, destination: .path))
                pathArguments[parameter.name] = label
            case .query:
                queryFields.append(.init(key: parameter.name, schema: schema, isRequired: parameter.required, pointer: pointer.appending("schema"), description: parameter.description))
                if let format = arrayFormat(of: parameter, schema: schema, at: pointer) { formats.append(format) }
            case .header:
                header(parameter, schema: schema, at: pointer, into: &context)
            case .cookie:
                schemas.report(pointer, "a cookie parameter is not expressed; send it in the request's `headers` or a middleware")
            default:
                schemas.report(pointer, "a parameter in the \(parameter.location.rawValue) is not expressed")
            }
        }
        context.request.pathInterpolation = interpolation(of: path, arguments: pathArguments, into: &context)
        query(queryFields, into: &context)
        if let format = formats.first {
            if Set(formats).count > 1 {
                schemas.report(context.pointer.appending("parameters"), "query arrays in more than one style; all are written `\(format)`")
            }
            context.request.arrayFormat = format
        }
    }

    /// The parameter's schema, or its JSON content's; nil (reported) for other content.
    private mutating func schema(of parameter: OpenAPI.Parameter, at pointer: JSONPointer) -> JSONSchema? {
        switch parameter.schemaOrContent {
        case .a(let context):
            switch context.schema {
            case .a(let reference): return .reference(reference.jsonReference)
            case .b(let schema): return schema
            }
        case .b(let content):
            if let (_, media) = MediaTypes.firstJSON(content, in: document.components), let schema = media.schema {
                schemas.report(pointer.appending("content"), "a parameter with JSON content is written as its form fields, not as JSON text")
                return schema
            }
            schemas.report(pointer.appending("content"), "a parameter with non-JSON content is left out")
            return nil
        }
    }

    /// A path parameter's type: text, a number, a Boolean, a UUID or an enum, which interpolate
    /// as one segment. Anything else is reported and taken as a `String`.
    private mutating func pathType(_ schema: JSONSchema, name: String, at pointer: JSONPointer, into context: inout Context) -> SwiftType {
        guard isPlain(schema) else {
            schemas.report(pointer, "a path parameter that is not a plain value is taken as a String")
            return .string
        }
        return schemas.type(for: schema, name: nestedName(name, in: &context), at: pointer, nested: &context.request.nested).unwrapped
    }

    /// The schema a value of `schema` has: through component references (at most eight, so that
    /// a schema referring to itself ends) and past `null` among `anyOf`/`oneOf` alternatives.
    func shape(of schema: JSONSchema) -> JSONSchema {
        var current = schema
        for _ in 0..<8 {
            current = Self.withoutNull(current)
            guard case .reference(.internal(.component(let key)), _) = current.value,
                  let target = schemas.components.schemas[OpenAPI.ComponentKey(stringLiteral: key)]
            else { return current }
            current = target
        }
        return current
    }

    /// The one alternative of `anyOf`/`oneOf` `[X, null]`, which is X allowing null; `schema` itself otherwise.
    private static func withoutNull(_ schema: JSONSchema) -> JSONSchema {
        switch schema.value {
        case .any(let alternatives, _), .one(let alternatives, _):
            let others = alternatives.filter { if case .null = $0.value { false } else { true } }
            return others.count == 1 && others.count < alternatives.count ? others[0] : schema
        default:
            return schema
        }
    }

    /// Whether a value of `schema` is text, a number, a Boolean or an enum of those.
    func isPlain(_ schema: JSONSchema) -> Bool {
        switch shape(of: schema).value {
        case .string, .integer, .number, .boolean: true
        default: false
        }
    }

    private func isArray(_ schema: JSONSchema) -> Bool {
        if case .array = shape(of: schema).value { true } else { false }
    }

    /// How a query array is written: `style: form` with `explode` → `repeated` (OpenAPI's
    /// default), without → `comma`; `deepObject` → `brackets`. Other styles are reported.
    private mutating func arrayFormat(of parameter: OpenAPI.Parameter, schema: JSONSchema, at pointer: JSONPointer) -> String? {
        guard case .a(let context) = parameter.schemaOrContent else { return nil }
        switch (context.style, isArray(schema)) {
        case (.form, true): return context.explode ? "repeated" : "comma"
        case (.deepObject, _): return "brackets"
        case (.form, false):
            if !isPlain(schema) {
                schemas.report(pointer, "an object in `style: form` is written as `\(parameter.name)[key]=value`, not as its own fields")
            }
            return nil
        default:
            schemas.report(pointer, "`style: \(context.style.rawValue)` is not expressed; the parameter is written in `style: form`")
            return nil
        }
    }

    /// A header parameter: a stored property, sent in `headers` as its text.
    private mutating func header(_ parameter: OpenAPI.Parameter, schema: JSONSchema, at pointer: JSONPointer, into context: inout Context) {
        var type: SwiftType = .string
        if isPlain(schema) {
            type = schemas.type(for: schema, name: nestedName(parameter.name, in: &context), at: pointer.appending("schema"), nested: &context.request.nested).unwrapped
        } else {
            schemas.report(pointer, "a header parameter that is not a plain value is taken as a String")
        }
        if !parameter.required { type = type.optional }
        let property = context.labels.claim(SwiftNames.memberName(parameter.name), avoiding: Self.requestMembers)
        context.request.arguments.append(.init(
            label: property,
            type: type,
            documentation: parameter.description,
            destination: .header(property: property, wireName: parameter.name)
        ))
    }

    /// The path with each `{name}` an interpolation of its argument; a name no parameter
    /// declares is reported and becomes a `String` argument.
    private mutating func interpolation(of path: OpenAPI.Path, arguments: [String: String], into context: inout Context) -> String {
        var result: [String] = []
        for component in path.components {
            var segment = ""
            var rest = Substring(component)
            while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
                segment += swiftLiteralContents(String(rest[..<open]))
                let name = String(rest[rest.index(after: open)..<close])
                var label = arguments[name]
                if label == nil {
                    schemas.report(context.pointer, "the path names `{\(name)}`, which no parameter declares; it is a String argument")
                    let added = context.labels.claim(SwiftNames.memberName(name))
                    context.request.arguments.append(.init(label: added, type: .string, documentation: nil, destination: .path))
                    label = added
                }
                segment += "\\(\(label ?? name))"
                rest = rest[rest.index(after: close)...]
            }
            segment += swiftLiteralContents(String(rest))
            result.append(segment)
        }
        return result.joined(separator: "/")
    }

    /// The query parameters as the request's `Query` struct.
    private mutating func query(_ fields: [SchemaTranslator.Field], into context: inout Context) {
        guard !fields.isEmpty else { return }
        var query = schemas.objectDeclaration(fields, name: "Query", documentation: Documentation(["The query string's parameters."]), reserving: context.usedTypeNames.names)
        query.isEncodableOnly = true
        // The request's initialiser names these types too: they go in the request, which the
        // query struct sees.
        context.request.nested.append(contentsOf: query.nested)
        context.usedTypeNames.formUnion(query.nested.map(\.name))
        query.nested = []
        for property in query.properties {
            let label = context.labels.claim(property.swiftName)
            context.request.arguments.append(.init(
                label: label,
                type: property.type,
                documentation: property.documentation.paragraphs.first,
                destination: .query(property.swiftName)
            ))
        }
        context.request.query = query
    }
}

/// A Swift string literal's contents for `text`, without the quotes.
func swiftLiteralContents(_ text: String) -> String {
    String(swiftStringLiteral(text).dropFirst().dropLast())
}

/// A parameter's identity within an operation: its name and where it goes.
private struct ParameterKey: Hashable {
    let name: String
    let location: String

    init(_ parameter: OpenAPI.Parameter) {
        name = parameter.name
        location = parameter.location.rawValue
    }
}
