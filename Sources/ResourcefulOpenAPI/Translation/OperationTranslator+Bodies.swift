internal import OpenAPIKit

/// Media types by what Resourceful does with them.
enum MediaTypes {
    /// The first JSON content of `content`, resolved.
    static func firstJSON(
        _ content: OpenAPI.Content.Map,
        in components: OpenAPI.Components
    ) -> (key: OpenAPI.ContentType, content: OpenAPI.Content)? {
        for (key, either) in content where isJSON(key.rawValue) {
            if let resolved = try? components.lookup(either) { return (key, resolved) }
        }
        return nil
    }

    /// `application/json`, `application/problem+json`, `*/*`: decoded and encoded as JSON.
    static func isJSON(_ mediaType: String) -> Bool {
        let essence = mediaType.split(separator: ";").first.map { $0.filter { $0 != " " }.lowercased() } ?? ""
        return essence == "application/json" || essence.hasSuffix("+json") || essence == "*/*" || essence == "application/*"
    }
}

extension OperationTranslator {
    /// The request body becomes `parameters`: JSON, or a form (`bodyEncoding`) for
    /// `application/x-www-form-urlencoded` and `multipart/form-data`; a multipart file is a
    /// ``MultipartFile``.
    mutating func requestBody(of operation: OpenAPI.Operation, method: String, into context: inout Context) {
        guard let either = operation.requestBody else { return }
        let pointer = context.pointer.appending("requestBody")
        guard let body = try? document.components.lookup(either) else {
            schemas.report(pointer, "the request body's reference does not resolve; no body is sent")
            return
        }
        guard ["create", "update"].contains(context.request.verb) else {
            schemas.report(pointer, "a \(method) body is not sent: a `\(context.request.verb)` sends its parameters in the query")
            return
        }
        let choices: [(String, String?)] = [("application/json", nil), ("application/x-www-form-urlencoded", "formURLEncoded"), ("multipart/form-data", "multipart")]
        var chosen: (key: OpenAPI.ContentType, content: OpenAPI.Content, encoding: String?)?
        for (wanted, encoding) in choices {
            if let match = body.content.first(where: { wanted == "application/json" ? MediaTypes.isJSON($0.key.rawValue) : $0.key.typeAndSubtype == wanted }),
               let content = try? document.components.lookup(match.value) {
                chosen = (match.key, content, encoding)
                break
            }
        }
        guard let chosen else {
            let types = body.content.pairs.map(\.key.rawValue).joined(separator: ", ")
            schemas.report(pointer.appending("content"), "no JSON, form or multipart body (\(types)); no body is sent")
            return
        }
        let place = pointer.appending("content").appending(chosen.key.rawValue).appending("schema")
        guard let schema = chosen.content.schema else {
            context.request.body = schemas.jsonValue()
            context.request.bodyEncoding = chosen.encoding
            return
        }
        let isMultipart = chosen.encoding == "multipart"
        schemas.binaryAsFile = isMultipart
        defer { schemas.binaryAsFile = false }
        context.usedTypeNames.remove("Parameters")
        if var declaration = schemas.inlineDeclaration(for: schema, name: "Parameters", documentation: Documentation(["The request's body."]), at: place) {
            if case .object(var object) = declaration, isMultipart {
                object.isEncodableOnly = true
                declaration = .object(object)
            }
            if case .alias(let alias) = declaration {
                context.request.body = alias.type
                context.request.nested.append(contentsOf: alias.companions)
            } else {
                context.request.body = .named("Parameters")
                context.request.nested.append(declaration)
            }
        } else {
            context.request.body = schemas.type(for: schema, name: nestedName("Parameters", in: &context), at: place, nested: &context.request.nested)
        }
        context.usedTypeNames.insert("Parameters")
        context.request.bodyEncoding = chosen.encoding
    }

    /// The first success response's JSON schema becomes `ResourceType` (`Empty` without a body);
    /// the error responses' schemas (4XX, 5XX, `default`) `ErrorResponse`, an enum of them when
    /// they differ.
    mutating func responses(of operation: OpenAPI.Operation, into context: inout Context) {
        let pointer = context.pointer.appending("responses")
        let ordered = operation.responses.sorted { Self.rank($0.key) < Self.rank($1.key) }
        if let success = ordered.first(where: { $0.key.isSuccess }) {
            context.usedTypeNames.remove("Response")
            context.request.resourceType = responseType(success.value, name: "Response", at: pointer.appending(success.key.rawValue), into: &context) ?? .named("Empty")
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

    /// The type of a response's JSON body, declaring an inline one as `name`; nil without a body,
    /// and for a body that is not JSON (reported: it is not decoded).
    private mutating func responseType(_ either: Either<OpenAPI.Reference<OpenAPI.Response>, OpenAPI.Response>, name: String, at pointer: JSONPointer, into context: inout Context) -> SwiftType? {
        guard let response = try? document.components.lookup(either) else {
            schemas.report(pointer, "the response's reference does not resolve; its body is not decoded")
            return nil
        }
        return responseType(response, name: name, at: pointer, into: &context)
    }

    private mutating func responseType(_ response: OpenAPI.Response, name: String, at pointer: JSONPointer, into context: inout Context) -> SwiftType? {
        guard !response.content.isEmpty else { return nil }
        guard let (key, content) = MediaTypes.firstJSON(response.content, in: document.components) else {
            let types = response.content.pairs.map(\.key.rawValue).joined(separator: ", ")
            schemas.report(pointer.appending("content"), "a body that is not JSON (\(types)) is not decoded")
            return nil
        }
        guard let schema = content.schema else { return schemas.jsonValue() }
        let place = pointer.appending("content").appending(key.rawValue).appending("schema")
        if let declaration = schemas.inlineDeclaration(for: schema, name: name, documentation: Documentation([response.description]), at: place) {
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
