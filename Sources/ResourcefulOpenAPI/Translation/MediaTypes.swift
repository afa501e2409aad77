internal import OpenAPIKit

/// Media types by what Resourceful does with them.
enum MediaTypes {
    /// How a body of a media type is sent or read.
    enum Kind: Equatable {
        /// Decoded and encoded as JSON: `api.call`.
        case json
        /// Server-sent events, `text/event-stream`: `api.events`.
        case eventStream
        /// One JSON value after another (`application/jsonl`, `application/x-ndjson`,
        /// `application/json-seq`): `api.lines`.
        case jsonLines
        /// Bytes with no structure the generated code reads: an upload from a file, or
        /// `api.download`.
        case binary
        /// Anything else (`text/plain`, `text/csv`, `application/xml`).
        case other
    }

    /// The first JSON content of `content`, resolved.
    static func firstJSON(
        _ content: OpenAPI.Content.Map,
        in components: OpenAPI.Components
    ) -> (key: OpenAPI.ContentType, content: OpenAPI.Content)? {
        first(of: .json, in: content, components: components)
    }

    /// The first content of `content` of `kind`, resolved; a content whose schema is
    /// `format: binary` is binary whatever its media type.
    static func first(
        of kind: Kind,
        in content: OpenAPI.Content.Map,
        components: OpenAPI.Components
    ) -> (key: OpenAPI.ContentType, content: OpenAPI.Content)? {
        for (key, either) in content {
            guard let resolved = try? components.lookup(either) else { continue }
            if self.kind(of: key.rawValue, schema: resolved.schema, components: components) == kind { return (key, resolved) }
        }
        return nil
    }

    /// `application/json`, `application/problem+json`, `*/*`: decoded and encoded as JSON.
    static func isJSON(_ mediaType: String) -> Bool {
        let essence = essence(of: mediaType)
        return essence == "application/json" || essence.hasSuffix("+json") || essence == "*/*" || essence == "application/*"
    }

    /// What a body of `mediaType` whose schema is `schema` is.
    static func kind(of mediaType: String, schema: JSONSchema?, components: OpenAPI.Components) -> Kind {
        let essence = essence(of: mediaType)
        if isJSON(essence) { return .json }
        if essence == "text/event-stream" { return .eventStream }
        if ["application/jsonl", "application/x-ndjson", "application/json-seq", "application/x-jsonlines"].contains(essence) {
            return .jsonLines
        }
        if isBinary(essence) || schema.map({ isBinary($0, components: components) }) == true { return .binary }
        return .other
    }

    /// `image/png`, `application/pdf`: media types of bytes that are not text. A `+json` or `+xml`
    /// type is text; `image/svg+xml` is XML, but still a file.
    static func isBinary(_ essence: String) -> Bool {
        let parts = essence.split(separator: "/", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return false }
        let (type, subtype) = (parts[0], parts[1])
        if ["image", "audio", "video", "font"].contains(type) { return true }
        guard type == "application" else { return false }
        if subtype.hasSuffix("+zip") || subtype.hasSuffix("+gzip") { return true }
        if subtype.hasPrefix("vnd.") { return !subtype.contains("+") }
        return binaryApplicationSubtypes.contains(subtype)
    }

    private static let binaryApplicationSubtypes: Set<String> = [
        "octet-stream", "pdf", "zip", "gzip", "x-gzip", "x-tar", "x-bzip2", "x-xz", "x-7z-compressed", "zstd",
        "wasm", "java-archive", "x-protobuf", "protobuf", "x-binary", "msword", "x-msdownload",
    ]

    /// Whether `schema` (its references followed) is a string of bytes: `format: binary`,
    /// `contentEncoding: binary`, or a `contentMediaType` that is binary.
    static func isBinary(_ schema: JSONSchema, components: OpenAPI.Components) -> Bool {
        var current = schema
        for _ in 0..<8 {
            guard case .reference(.internal(.component(let key)), _) = current.value,
                  let target = components.schemas[OpenAPI.ComponentKey(stringLiteral: key)]
            else { break }
            current = target
        }
        guard case .string(let core, let string) = current.value else { return false }
        return core.formatString == "binary" || string.contentEncoding == .binary
            || string.contentMediaType.map { isBinary(essence(of: $0.rawValue)) } == true
    }

    /// `Image/PNG; q=1` → `image/png`.
    static func essence(of mediaType: String) -> String {
        mediaType.split(separator: ";").first.map { $0.filter { $0 != " " }.lowercased() } ?? ""
    }
}
