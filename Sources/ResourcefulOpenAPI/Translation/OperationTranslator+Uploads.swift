internal import OpenAPIKit

extension OperationTranslator {
    /// A body of bytes (`application/octet-stream`, `image/png`, a `format: binary` schema) is a
    /// `FileUpload`, streamed from disk: the initialiser takes the file and its media type, the
    /// document's first one by default. False when the body has no such media type.
    mutating func upload(from body: OpenAPI.Request, into context: inout Context) -> Bool {
        let mediaTypes = body.content.pairs.compactMap { key, either -> String? in
            let schema = (try? document.components.lookup(either))?.schema
            guard MediaTypes.kind(of: key.rawValue, schema: schema, components: document.components) == .binary else { return nil }
            return key.rawValue
        }
        guard !mediaTypes.isEmpty else { return false }
        context.request.body = .named("FileUpload")
        context.request.upload = RequestDeclaration.Upload(
            fileLabel: context.labels.claim("file"),
            contentTypeLabel: context.labels.claim("contentType"),
            defaultContentType: mediaTypes.first { !$0.contains("*") },
            mediaTypes: mediaTypes
        )
        return true
    }
}
