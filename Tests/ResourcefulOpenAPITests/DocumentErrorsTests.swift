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
}
