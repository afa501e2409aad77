internal import Foundation
internal import OpenAPIKit
internal import OpenAPIKit30
internal import OpenAPIKitCompat
internal import Yams

/// Reads an OpenAPI 3.0 or 3.1 document, JSON or YAML, into OpenAPIKit's 3.1 model (a 3.0
/// document is converted).
enum DocumentLoader {
    static func load(_ data: Data) throws(OpenAPIGeneratorError) -> OpenAPIKit.OpenAPI.Document {
        guard let text = String(data: data, encoding: .utf8) else {
            throw OpenAPIGeneratorError(kind: .unreadableDocument, detail: "the document is not UTF-8 text")
        }
        // One parse: the version is read from the same node tree the document is decoded from.
        // The parser holds the anchors the nodes refer to, so it lives until decoding is done.
        let parser: Parser
        let root: Node
        do {
            parser = try Parser(yaml: text, resolver: Resolver.basic.appending(.merge))  // as YAMLDecoder parses
            root = try parser.singleRoot() ?? ""
        } catch {
            throw OpenAPIGeneratorError(kind: .unreadableDocument, detail: "neither JSON nor YAML: \(error)")
        }
        return try withExtendedLifetime(parser) { () throws(OpenAPIGeneratorError) in
            let version = try self.version(of: root)
            do {
                if version.hasPrefix("3.1") {
                    return try YAMLDecoder().decode(OpenAPIKit.OpenAPI.Document.self, from: root)
                }
                if version.hasPrefix("3.0") {
                    return try YAMLDecoder().decode(OpenAPIKit30.OpenAPI.Document.self, from: root).convert(to: .v3_1_1)
                }
            } catch {
                throw OpenAPIGeneratorError(kind: .unreadableDocument, detail: Self.describe(error))
            }
            throw OpenAPIGeneratorError(kind: .unsupportedVersion, detail: "\(version): only OpenAPI 3.0 and 3.1 are read")
        }
    }

    /// The `openapi` field (YAML is a superset of JSON: one parser reads both).
    private static func version(of root: Node) throws(OpenAPIGeneratorError) -> String {
        guard let mapping = root.mapping else {
            throw OpenAPIGeneratorError(kind: .unreadableDocument, detail: "the document is not a mapping of fields")
        }
        guard let version = mapping["openapi"]?.string else {
            if mapping["swagger"] != nil {
                throw OpenAPIGeneratorError(kind: .unsupportedVersion, detail: "Swagger 2.0: convert the document to OpenAPI 3")
            }
            throw OpenAPIGeneratorError(kind: .unreadableDocument, detail: "no `openapi` field: not an OpenAPI document")
        }
        return version
    }

    /// The parser's error with the place in the document it names.
    private static func describe(_ error: any Error) -> String {
        let readable = OpenAPIKit.OpenAPI.Error(from: error)
        let place = readable.codingPathString
        return readable.localizedDescription + (place.isEmpty ? "" : " (at \(place))")
    }
}
