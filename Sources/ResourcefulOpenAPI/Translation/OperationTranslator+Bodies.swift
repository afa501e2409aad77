internal import OpenAPIKit

extension OperationTranslator {
    /// The request body becomes `parameters`: JSON, or a form (`bodyEncoding`) for
    /// `application/x-www-form-urlencoded` and `multipart/form-data`; a multipart file is a
    /// ``MultipartFile``; a body of bytes is a `FileUpload` (``upload(from:into:)``).
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
            if upload(from: body, into: &context) { return }
            let types = body.content.pairs.map(\.key.rawValue).joined(separator: ", ")
            schemas.report(pointer.appending("content"), "no JSON, form, multipart or binary body (\(types)); no body is sent")
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
}
