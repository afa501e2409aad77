internal import OpenAPIKit

extension OperationTranslator {
    /// The first success response's schema becomes `ResourceType` (`Empty` without a body, see
    /// ``successType(_:at:into:)``); the error responses' JSON schemas (4XX, 5XX, `default`)
    /// `ErrorResponse`, an enum of them when they differ.
    mutating func responses(of operation: OpenAPI.Operation, into context: inout Context) {
        let pointer = context.pointer.appending("responses")
        let ordered = operation.responses.sorted { Self.rank($0.key) < Self.rank($1.key) }
        if let success = ordered.first(where: { $0.key.isSuccess }) {
            context.usedTypeNames.remove("Response")
            context.request.resourceType = successType(success.value, at: pointer.appending(success.key.rawValue), into: &context) ?? .named("Empty")
        }
        var failures: [(status: String, schema: JSONSchema, type: SwiftType, strictness: Int)] = []
        for (status, either) in ordered where !status.isSuccess && Self.rank(status) >= 400 {
            let place = pointer.appending(status.rawValue)
            guard let response = try? document.components.lookup(either) else {
                schemas.report(place, "the response's reference does not resolve; its body is not decoded")
                continue
            }
            guard let (key, content) = MediaTypes.firstJSON(response.content, in: document.components) else { continue }
            let schema = content.schema ?? JSONSchema.fragment
            guard !failures.contains(where: { $0.schema == schema }) else { continue }
            let isProblem = key.rawValue.lowercased().hasPrefix("application/problem+json")
            let type: SwiftType
            if content.schema == nil, isProblem {
                type = .named("ProblemDetails")
            } else {
                let name = failures.isEmpty ? "Failure" : SwiftNames.typeName("Failure " + status.rawValue)
                context.usedTypeNames.insert(name)
                type = responseType(response, name: name, at: place, into: &context) ?? schemas.jsonValue()
            }
            failures.append((status.rawValue, schema, type, schemas.strictness(of: schema)))
        }
        switch failures.count {
        case 0: break
        case 1: context.request.errorType = failures[0].type
        default:
            let alternatives = failures.map { failure in
                UnionDeclaration.Alternative(
                    caseName: SwiftNames.memberName("status " + failure.status),
                    type: failure.type,
                    tags: [],
                    strictness: failure.strictness
                )
            }
            let name = nestedName("Errors", in: &context)
            context.request.nested.append(.union(UnionDeclaration(
                name: name,
                documentation: Documentation(["The error bodies the document lists, by status: the first that decodes, those with more required properties tried first."]),
                alternatives: alternatives,
                discriminator: nil,
                nested: [],
                isDecodableOnly: true
            )))
            context.request.errorType = .named(name)
        }
    }

    /// The type of a response's JSON body; nil without a body or JSON content.
    mutating func responseType(_ response: OpenAPI.Response, name: String, at pointer: JSONPointer, into context: inout Context) -> SwiftType? {
        guard let (key, content) = MediaTypes.firstJSON(response.content, in: document.components) else { return nil }
        guard let schema = content.schema else { return schemas.jsonValue() }
        let place = pointer.appending("content").appending(key.rawValue).appending("schema")
        return elementType(schema, name: name, documentation: Documentation([response.description]), at: place, into: &context)
    }

    /// The type of a value of `schema`, declaring an inline one as `name` among the request's
    /// nested types.
    mutating func elementType(_ schema: JSONSchema, name: String, documentation: Documentation, at place: JSONPointer, into context: inout Context) -> SwiftType {
        if let declaration = schemas.inlineDeclaration(for: schema, name: name, documentation: documentation, at: place) {
            if case .alias(let alias) = declaration {
                context.request.nested.append(contentsOf: alias.companions)
                return alias.type
            }
            context.request.nested.append(declaration)
            return .named(name)
        }
        return schemas.type(for: schema, name: name, at: place, nested: &context.request.nested)
    }

    /// Statuses in order: codes, then ranges at their first code, then `default` last.
    private static func rank(_ status: OpenAPI.Response.StatusCode) -> Int {
        switch status.value {
        case .status(let code): code
        case .range(let range): (Int(range.rawValue.prefix(1)) ?? 9) * 100 + 99
        case .default: 1000
        }
    }
}

extension JSONSchema {
    /// The empty schema, which allows any value.
    fileprivate static var fragment: JSONSchema { .fragment(.init()) }
}
