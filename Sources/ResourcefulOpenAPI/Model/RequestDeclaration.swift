/// One operation as a `ResourceRequest` struct.
struct RequestDeclaration: Sendable {
    /// An initialiser argument, and where its value goes.
    struct Argument: Sendable {
        enum Destination: Sendable {
            /// Interpolated into the path.
            case path
            /// The body, `parameters`.
            case body
            /// The query property of this Swift name.
            case query(String)
            /// The stored header property of this Swift name, sent as the field `wireName`.
            case header(property: String, wireName: String)
        }
        var label: String
        var type: SwiftType
        var documentation: String?
        var destination: Destination
    }

    var name: String
    var documentation: Documentation
    var verb: String
    var isPatch = false
    /// The path as a `ResourcePath` string interpolation's contents: `pets/\(id)`.
    var pathInterpolation: String
    var arguments: [Argument] = []
    var query: ObjectDeclaration?
    var body: SwiftType?
    var bodyEncoding: String?
    var arrayFormat: String?
    var resourceType: SwiftType = .named("Empty")
    var errorType: SwiftType?
    var nested: [Declaration] = []
}
