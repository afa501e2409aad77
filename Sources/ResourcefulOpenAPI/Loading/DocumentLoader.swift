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
            throw OpenAPIGeneratorError(kind: .unreadableDocument, detail: "neither JSON nor YAML: \(Self.shortened(error))")
        }
        return try withExtendedLifetime(parser) { () throws(OpenAPIGeneratorError) in
            try checkSize(of: root, limit: maximumValues(forBytes: data.count))
            let version = try self.version(of: root)
            do {
                if version.hasPrefix("3.1") {
                    return try NodeDecoder.decode(OpenAPIKit.OpenAPI.Document.self, from: root)
                }
                if version.hasPrefix("3.0") {
                    return try NodeDecoder.decode(OpenAPIKit30.OpenAPI.Document.self, from: root).convert(to: .v3_1_1)
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

    /// How many values a document of `bytes` bytes may hold once its YAML aliases are expanded.
    ///
    /// Without aliases a document holds fewer values than it has bytes; aliases may repeat a part
    /// many times over, and aliases of aliases grow exponentially (a few hundred bytes can stand for
    /// billions of values, which decoding would walk one by one).
    static func maximumValues(forBytes bytes: Int) -> Int {
        100_000 + 10 * bytes
    }

    /// How deep a document may nest its values. Decoding recurses once per level or more, and a
    /// stack overflow is a crash, not an error; real documents nest a few dozen levels.
    static let maximumDepth = 128

    /// Throws when the tree nests deeper than ``maximumDepth`` or holds more than `limit` values
    /// with its aliases expanded; stops counting there, so a document made to expand without end
    /// costs at most `limit` steps.
    static func checkSize(of root: Node, limit: Int) throws(OpenAPIGeneratorError) {
        var remaining = limit
        var pending = [(root, 1)]
        while let (node, depth) = pending.popLast() {
            remaining -= 1
            guard remaining >= 0 else {
                throw OpenAPIGeneratorError(
                    kind: .unreadableDocument,
                    detail: "its YAML aliases expand to more than \(limit) values"
                )
            }
            guard depth <= maximumDepth else {
                let line = node.mark.map { " (line \($0.line))" } ?? ""
                throw OpenAPIGeneratorError(
                    kind: .unreadableDocument,
                    detail: "it nests values more than \(maximumDepth) levels deep\(line)"
                )
            }
            switch node {
            case .scalar, .alias: break
            case .sequence(let sequence): pending.append(contentsOf: sequence.map { ($0, depth + 1) })
            case .mapping(let mapping):
                for (key, value) in mapping {
                    pending.append((key, depth + 1))
                    pending.append((value, depth + 1))
                }
            }
        }
    }

    /// The parser's error, each line cut to 160 characters: the parser quotes the line it stopped
    /// at, which in a minified JSON document is the whole document.
    static func shortened(_ error: any Error) -> String {
        String(describing: error).split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.count > 160 ? line.prefix(160) + "…" : line
        }.joined(separator: "\n")
    }

    /// The parser's error with the place in the document it names.
    private static func describe(_ error: any Error) -> String {
        let readable = OpenAPIKit.OpenAPI.Error(from: error)
        let place = readable.codingPathString
        return readable.localizedDescription + (place.isEmpty ? "" : " (at \(place))")
    }
}
