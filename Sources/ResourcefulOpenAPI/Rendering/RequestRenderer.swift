/// Writes a ``RequestDeclaration`` as a `ResourceRequest` struct.
struct RequestRenderer {
    /// `public `, `package ` or empty.
    let access: String
    var declarations: DeclarationRenderer { DeclarationRenderer(access: access) }

    func render(_ request: RequestDeclaration, into writer: inout CodeWriter) {
        writer.documentation(request.documentation)
        writer.block("\(access)struct \(request.name): ResourceRequest") { writer in
            writer.line("\(access)typealias ResourceType = \(request.resourceType.code)")
            if let error = request.errorType {
                writer.line("\(access)typealias ErrorResponse = \(error.code)")
            }
            if let body = request.body, body != .named("Parameters") {
                writer.line("\(access)typealias Parameters = \(body.code)")
            }
            writer.line()
            writer.line("\(access)let verb = ResourceVerb.\(request.verb)")
            writer.line("\(access)let path: ResourcePath")
            if request.body != nil {
                writer.documentation(Documentation(["The request's body."]))
                writer.line("\(access)let parameters: Parameters")
            }
            if request.query != nil {
                writer.line("\(access)let query: Query")
            }
            for argument in request.arguments {
                guard case .header(let property, let wireName) = argument.destination else { continue }
                writer.documentation(Documentation([argument.documentation, "Sent in the `\(wireName)` header."]))
                writer.line("\(access)let \(property): \(argument.type.code)")
            }
            renderSettings(request, into: &writer)
            writer.line()
            renderInitialiser(request, into: &writer)
            if let query = request.query {
                writer.line()
                declarations.render(.object(query), into: &writer)
            }
            for nested in request.nested {
                writer.line()
                declarations.render(nested, into: &writer)
            }
        }
    }

    /// The operation's settings as the one-property overrides, not as `configure(_:)`: generated
    /// files are written again on every build, and `configure(_:)` stays free for the user to
    /// write in an extension of the generated request.
    private func renderSettings(_ request: RequestDeclaration, into writer: inout CodeWriter) {
        if request.isPatch {
            writer.line("\(access)var updateMethod: UpdateMethod { .patch }")
        }
        if let encoding = request.bodyEncoding {
            writer.line("\(access)var bodyEncoding: BodyEncoding { .\(encoding) }")
        }
        if let format = request.arrayFormat {
            writer.line("\(access)var arrayFormat: ArrayFormat? { .\(format) }")
        }
        let headers = request.arguments.compactMap { argument -> (String, String, Bool)? in
            guard case .header(let property, let wireName) = argument.destination else { return nil }
            return (property, wireName, argument.type.isOptional)
        }
        guard !headers.isEmpty else { return }
        writer.block("\(access)var headers: [String: String]") { writer in
            writer.line("var headers: [String: String] = [:]")
            for (property, wireName, isOptional) in headers {
                if isOptional {
                    writer.line("if let \(property) { headers[\(swiftStringLiteral(wireName))] = \(property).description }")
                } else {
                    writer.line("headers[\(swiftStringLiteral(wireName))] = \(property).description")
                }
            }
            writer.line("return headers")
        }
    }

    /// Path arguments first, then the body, then required and optional query and header
    /// arguments; optional ones default to nil.
    private func renderInitialiser(_ request: RequestDeclaration, into writer: inout CodeWriter) {
        let path = request.arguments.filter { if case .path = $0.destination { true } else { false } }
        let others = request.arguments.filter { if case .path = $0.destination { false } else { true } }
        var arguments = path.map { "\($0.label): \($0.type.code)" }
        if let upload = request.upload {
            arguments.append("\(upload.fileLabel): URL")
            if upload.defaultContentType == nil { arguments.append("\(upload.contentTypeLabel): String") }
        } else if request.body != nil {
            arguments.append("parameters: Parameters")
        }
        arguments += others.filter { !$0.type.isOptional }.map { "\($0.label): \($0.type.code)" }
        arguments += others.filter(\.type.isOptional).map { "\($0.label): \($0.type.code) = nil" }
        if let upload = request.upload, let type = upload.defaultContentType {
            arguments.append("\(upload.contentTypeLabel): String = \(swiftStringLiteral(type))")
        }

        var documented = request.arguments.compactMap { argument in
            argument.documentation.map { (SwiftNames.bare(argument.label), $0) }
        }
        if let upload = request.upload {
            let types = upload.mediaTypes.map { "`\($0)`" }.joined(separator: ", ")
            documented.append((SwiftNames.bare(upload.fileLabel), "The file sent as the body, read as it is sent."))
            documented.append((SwiftNames.bare(upload.contentTypeLabel), "The body's media type; the document lists \(types)."))
        } else if request.body != nil {
            documented.append(("parameters", "The request's body."))
        }
        var parameterLines: [String] = []
        if !documented.isEmpty {
            parameterLines.append("- Parameters:\n" + documented.map { "  - \($0.0): \(Self.oneLine($0.1))" }.joined(separator: "\n"))
        }
        writer.documentation(Documentation(["A request with these values."] + parameterLines))
        writer.block("\(access)init(\(arguments.joined(separator: ", ")))") { writer in
            writer.line("self.path = \"\(request.pathInterpolation)\"")
            if let upload = request.upload {
                writer.line("self.parameters = FileUpload(\(upload.fileLabel), contentType: \(upload.contentTypeLabel))")
            } else if request.body != nil {
                writer.line("self.parameters = parameters")
            }
            if request.query != nil {
                // The query's arguments, in the order of its properties.
                let values = request.arguments.compactMap { argument -> String? in
                    guard case .query(let property) = argument.destination else { return nil }
                    return "\(SwiftNames.bare(property)): \(argument.label)"
                }
                writer.line("self.query = Query(\(values.joined(separator: ", ")))")
            }
            for argument in request.arguments {
                guard case .header(let property, _) = argument.destination else { continue }
                writer.line("self.\(property) = \(argument.label)")
            }
        }
    }

    private static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}
