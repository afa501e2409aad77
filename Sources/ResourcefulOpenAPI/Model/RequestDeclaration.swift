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

    /// How the request is called: its response decoded by `api.call`, streamed, or written to a
    /// file.
    enum Call: Sendable, Equatable {
        case call
        /// `api.events`: a `text/event-stream` response.
        case events
        /// `api.lines`: a JSON Lines or JSON text sequence response.
        case lines
        /// `api.download`: a response of bytes that are not decoded.
        case download
    }

    /// A body read from a file: the initialiser takes the file's URL and its media type and makes
    /// `parameters` a `FileUpload` of them.
    struct Upload: Sendable {
        /// The initialiser's argument for the file.
        var fileLabel: String
        /// The initialiser's argument for the media type.
        var contentTypeLabel: String
        /// The media type the argument defaults to: the document's first one that is not a range
        /// (`image/*`); nil when it names only ranges.
        var defaultContentType: String?
        /// The media types the document lists, for the argument's comment.
        var mediaTypes: [String]
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
    var call = Call.call
    var upload: Upload?
    var errorType: SwiftType?
    var nested: [Declaration] = []
}
