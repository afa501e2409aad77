internal import OpenAPIKit

/// Turns one operation into a ``RequestDeclaration``: its verb, path, arguments, body, result
/// and error types, and documentation.
struct OperationTranslator {
    let document: OpenAPI.Document
    var schemas: SchemaTranslator
    let security: SecurityDocumentation

    /// The operation at `path` and `method` as a request type.
    mutating func translate(
        _ operation: OpenAPI.Operation,
        method: OpenAPI.HttpMethod,
        path: OpenAPI.Path,
        pathItem: OpenAPI.PathItem,
        name: String
    ) -> RequestDeclaration {
        let methodName = method.rawValue.uppercased()
        let pointer = JSONPointer.root.appending("paths").appending(path.rawValue).appending(method.rawValue.lowercased())
        let (verb, isPatch) = verb(for: methodName, path: path, at: pointer)
        var request = RequestDeclaration(name: name, documentation: Documentation(), verb: verb, isPatch: isPatch, pathInterpolation: "")
        var context = Context(request: request, pointer: pointer)
        context.usedTypeNames = [name, "Query", "Parameters", "Response", "Failure", "CodingKeys"]
        parameters(of: operation, pathItem: pathItem, path: path, into: &context)
        requestBody(of: operation, method: methodName, into: &context)
        responses(of: operation, into: &context)
        request = context.request

        var notes = ["`\(methodName) /\(path.components.joined(separator: "/"))`, sent as `\(verb)`\(isPatch ? " with `PATCH`" : "")."]
        if methodName != Self.sentMethod(verb: verb, isPatch: isPatch) {
            notes[0] += " \(methodName) has no verb of its own: the request is sent as \(Self.sentMethod(verb: verb, isPatch: isPatch))."
        }
        notes.append(contentsOf: CallDocumentation.notes(for: request))
        notes.append(contentsOf: security.notes(for: operation.security ?? (document.security.isEmpty ? nil : document.security)))
        if operation.deprecated { notes.append("Deprecated by the document.") }
        request.documentation = Documentation([operation.summary ?? pathItem.summary, operation.description ?? pathItem.description] + notes)
        return request
    }

    /// What a translation builds up: the request and the names its nested types use.
    struct Context {
        var request: RequestDeclaration
        var pointer: JSONPointer
        var usedTypeNames: UniqueNames = []
        /// The initialiser's argument names: `self` is taken, since an argument of that name would
        /// hide the request being initialised.
        var labels: UniqueNames = ["parameters", "self"]
    }

    // MARK: Names and verbs

    /// `listUsers` → `ListUsers`; without an `operationId`, the method and the path:
    /// `GET /pets/{id}/photos` → `GetPetsByIdPhotos`.
    static func typeName(operationId: String?, method: String, path: OpenAPI.Path) -> String {
        if let operationId, !SwiftNames.words(operationId).isEmpty {
            return SwiftNames.typeName(operationId)
        }
        let words = path.components.map { component -> String in
            if component.hasPrefix("{"), component.hasSuffix("}") {
                return "By " + String(component.dropFirst().dropLast())
            }
            return component
        }
        return SwiftNames.typeName(([method.lowercased()] + words).joined(separator: " "))
    }

    /// The verb: `GET` a path ending in a parameter → `show`, other `GET` → `index`, `POST` →
    /// `create`, `PUT` → `update`, `PATCH` → `update` with `.patch`, `DELETE` → `delete`. Any other
    /// method takes the nearest verb, and a diagnostic says so.
    private mutating func verb(for method: String, path: OpenAPI.Path, at pointer: JSONPointer) -> (String, Bool) {
        let endsInParameter = path.components.last.map { $0.hasPrefix("{") && $0.hasSuffix("}") } ?? false
        switch method {
        case "GET": return (endsInParameter ? "show" : "index", false)
        case "POST": return ("create", false)
        case "PUT": return ("update", false)
        case "PATCH": return ("update", true)
        case "DELETE": return ("delete", false)
        default:
            let verb = endsInParameter ? "show" : "index"
            schemas.report(pointer, "\(method) has no verb; the request is sent as GET (`\(verb)`)")
            return (verb, false)
        }
    }

    static func sentMethod(verb: String, isPatch: Bool) -> String {
        switch verb {
        case "create": "POST"
        case "update": isPatch ? "PATCH" : "PUT"
        case "delete": "DELETE"
        default: "GET"
        }
    }

    /// A nested type name in the request, from `wire`.
    func nestedName(_ wire: String, in context: inout Context) -> String {
        schemas.nestedTypeName(for: wire, in: &context.usedTypeNames)
    }
}
