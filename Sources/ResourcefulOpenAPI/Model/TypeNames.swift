/// The names of the generated top-level types: one per component schema and one per operation,
/// each unique, none hiding a standard, Foundation or Resourceful type the generated code uses.
struct TypeNames: Sendable {
    /// Names a schema would hide: it gets `Model` after its name (`Error` → `ErrorModel`).
    static let reserved: Set<String> = [
        "Any", "API", "APIError", "Array", "ArrayFormat", "BodyEncoding", "Bool", "Character", "Codable",
        "CodingKey", "CodingKeys", "Data", "Date", "Decodable", "Decoder", "DecodingError", "Dictionary",
        "Double", "Empty", "Encodable", "Encoder", "Equatable", "Error", "ErrorResponse", "Failure", "Float",
        "Hashable", "Hasher", "Int", "Int32", "Int64", "JSONValue", "MultipartFile", "Never", "Optional",
        "Parameters", "Protocol", "ProblemDetails", "Query", "ResourcePath", "Response", "ResourceRequest", "ResourceType", "ResourceVerb",
        "Result", "Self", "Sendable", "Set", "String", "Type", "UpdateMethod", "URL", "UUID", "Void",
    ]

    private var schemas: [String: String] = [:]
    private var used: UniqueNames = []

    /// Names for the component schemas, in the document's order.
    init(schemaKeys: [String]) {
        for key in schemaKeys {
            var base = SwiftNames.typeName(key)
            if Self.reserved.contains(base) { base += "Model" }
            schemas[key] = claim(base)
        }
    }

    /// The Swift name of the component schema `key`.
    func schemaType(_ key: String) -> String {
        schemas[key] ?? SwiftNames.typeName(key)
    }

    /// Whether `name` is a top-level generated type.
    func isTopLevel(_ name: String) -> Bool {
        used.contains(name)
    }

    /// A unique name for an operation's request type; `Request` is added when a schema has the name.
    mutating func requestType(_ candidate: String) -> String {
        var base = candidate
        if Self.reserved.contains(base) || used.contains(base) { base += "Request" }
        return claim(base)
    }

    private mutating func claim(_ base: String) -> String {
        used.claim(base)
    }
}
