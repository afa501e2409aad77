import Foundation
import ResourcefulOpenAPI
import Testing

/// A document that cannot be read is a typed error that says why; it never traps.
@Suite struct DocumentErrorsTests {
    @Test(arguments: [
        ("{ not: [closed", OpenAPIGeneratorError.Kind.unreadableDocument, "neither JSON nor YAML"),
        ("- a\n- b", .unreadableDocument, "not a mapping"),
        ("title: x", .unreadableDocument, "no `openapi` field"),
        ("swagger: '2.0'\ninfo: {title: x, version: '1'}\npaths: {}", .unsupportedVersion, "Swagger 2.0"),
        ("openapi: 4.0.0\ninfo: {title: x, version: '1'}\npaths: {}", .unsupportedVersion, "4.0.0"),
        ("openapi: 3.1.0\ninfo: {version: '1'}\npaths: {}", .unreadableDocument, "title"),
        ("openapi: 3.0.3\ninfo: {title: x, version: '1'}\npaths: {/a: {get: {responses: 7}}}", .unreadableDocument, "responses"),
    ])
    func anUnreadableDocumentIsATypedError(document: String, kind: OpenAPIGeneratorError.Kind, mention: String) throws {
        let error = try #require(throws: OpenAPIGeneratorError.self) { try ProjectFiles.generate(document) }
        #expect(error.kind == kind)
        #expect(error.description.contains(mention), "\(error)")
    }

    @Test func bytesThatAreNotUTF8AreRefused() throws {
        let error = try #require(throws: OpenAPIGeneratorError.self) {
            try OpenAPIGenerator().generate(from: Data([0xFF, 0xFE, 0x00]), documentName: "x")
        }
        #expect(error.kind == .unreadableDocument)
    }

    @Test func jsonDocumentsReadAsYAMLDo() throws {
        let json = #"{"openapi": "3.1.0", "info": {"title": "J", "version": "1"}, "paths": {"/a": {"get": {"operationId": "getA", "responses": {"204": {"description": "none"}}}}}}"#
        let generation = try ProjectFiles.generate(json)
        #expect(generation.operationCount == 1)
        #expect(generation.files[1].contents.contains("public struct GetA: ResourceRequest"))
    }

    /// Nine levels of ten aliases each stand for ten billion strings in a few hundred bytes.
    @Test(.timeLimit(.minutes(1))) func aliasesThatExpandWithoutEndAreRefused() throws {
        var lines = [Self.header, "x-l0: &l0 [\(Array(repeating: "lol", count: 10).joined(separator: ", "))]"]
        for level in 1...9 {
            lines.append("x-l\(level): &l\(level) [\(Array(repeating: "*l\(level - 1)", count: 10).joined(separator: ", "))]")
        }
        let error = try #require(throws: OpenAPIGeneratorError.self) { try ProjectFiles.generate(lines.joined(separator: "\n")) }
        #expect(error.kind == .unreadableDocument)
        #expect(error.description.contains("aliases expand to more than"), "\(error)")
    }

    @Test func aliasesUsedAsDocumentsUseThemAreRead() throws {
        let document = """
            \(Self.header)
            components:
              schemas:
                Name: &name {type: object, required: [first], properties: {first: {type: string}, last: {type: string}}}
                Alias: *name
                Person: {type: object, properties: {name: *name, former: {type: array, items: *name}}}
            """
        let generation = try ProjectFiles.generate(document)
        #expect(generation.schemaCount == 3)
        let schemas = generation.files[0].contents
        #expect(schemas.contains("public struct Alias: Codable"))
        #expect(schemas.contains("public var former: [FormerItem]?"))
        #expect(schemas.components(separatedBy: "public var first: String\n").count == 5)
    }

    /// Decoding recurses once per level or more: a deep enough document would overflow the stack.
    @Test func nestingDeeperThanTheLimitIsAnErrorNotACrash() throws {
        let error = try #require(throws: OpenAPIGeneratorError.self) { try ProjectFiles.generate(Self.nestedArrays(400)) }
        #expect(error.kind == .unreadableDocument)
        #expect(error.description.contains("more than 128 levels deep"), "\(error)")
        let generation = try ProjectFiles.generate(Self.nestedArrays(100))
        #expect(generation.files[0].contents.contains(String(repeating: "[", count: 100) + "String"))
    }

    /// The parser quotes the line it stopped at; a minified document is one line.
    @Test func aParseErrorQuotesAShortenedLine() throws {
        let values = (0..<20_000).map { "\"v\($0)\"" }.joined(separator: ",")
        let document = #"{"openapi": "3.1.0", "info": {"title": "J", "version": "1"}, "paths": {}, "x-long": ["# + values + "}"
        let error = try #require(throws: OpenAPIGeneratorError.self) { try ProjectFiles.generate(document) }
        #expect(error.kind == .unreadableDocument)
        #expect(error.description.count < 1_000, "\(error.description.count) characters")
    }

    static let header = "openapi: 3.1.0\ninfo: {title: x, version: '1'}\npaths: {}"

    /// A document whose one schema is an array of arrays `depth` times over.
    static func nestedArrays(_ depth: Int) -> String {
        let open = String(repeating: #"{"type": "array", "items": "#, count: depth)
        return "\(header)\ncomponents: {schemas: {A: \(open){\"type\": \"string\"}\(String(repeating: "}", count: depth))}}"
    }
}
