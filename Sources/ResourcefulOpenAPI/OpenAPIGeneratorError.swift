/// Why no code could be generated from a document.
///
/// A document that parses is always generated, with ``OpenAPIDiagnostic``s for what it could not
/// express; these errors are for a document that cannot be read at all.
public struct OpenAPIGeneratorError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure.
    public enum Kind: Sendable, Hashable {
        /// The document is neither JSON nor YAML, or not an OpenAPI document; or it nests values
        /// more than 128 levels deep, or its YAML aliases expand to more values than its size
        /// allows (100,000 plus 10 per byte).
        case unreadableDocument
        /// The document's `openapi` version is not 3.0 or 3.1.
        case unsupportedVersion
        /// A `resourceful-openapi.json` configuration that does not decode.
        case invalidConfiguration
    }

    /// What kind of failure.
    public var kind: Kind
    /// What went wrong, naming the place in the document where the parser says.
    public var detail: String

    init(kind: Kind, detail: String) {
        self.kind = kind
        self.detail = detail
    }

    /// The kind and the detail.
    public var description: String {
        switch kind {
        case .unreadableDocument: "cannot read the OpenAPI document: \(detail)"
        case .unsupportedVersion: "unsupported OpenAPI version: \(detail)"
        case .invalidConfiguration: "invalid generator configuration: \(detail)"
        }
    }
}
