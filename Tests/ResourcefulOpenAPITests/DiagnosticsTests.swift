import Foundation
import ResourcefulOpenAPI
import Testing

/// What a document holds that cannot be expressed is reported with its JSON pointer, and the
/// rest is still generated.
@Suite struct DiagnosticsTests {
    @Test func eachUnexpressibleConstructIsNamedByItsPointer() throws {
        let users = try ProjectFiles.generate(spec: "users")
        #expect(users.diagnostics.map(\.pointer) == [
            "#/paths/~1users~1{id}/head",
            "#/paths/~1reports~1{kind}/get/parameters/1",
            "#/paths/~1reports~1{kind}/get/responses/200/content",
        ])
        #expect(users.diagnostics[0].message.contains("sent as GET"))
        #expect(users.diagnostics[1].message.contains("cookie"))
        #expect(users.diagnostics[2].message.contains("text/csv"))
        #expect(users.operationCount == 11)

        let shapes = try ProjectFiles.generate(spec: "shapes")
        #expect(shapes.diagnostics.map(\.description) == ["#/components/schemas/NotAString/not: `not` is not expressed; the value is JSONValue"])
    }

    @Test func unusualDocumentsStillGenerate() throws {
        let document = """
            openapi: 3.0.0
            info: { title: Odd, version: "1" }
            paths:
              /things/{thing-id}/notes:
                get:
                  parameters:
                    - { name: ids, in: query, style: pipeDelimited, schema: { type: array, items: { type: integer } } }
                    - { name: q, in: query, content: { text/plain: { schema: { type: string } } } }
                  requestBody:
                    content: { application/json: { schema: { type: object } } }
                  responses:
                    "200": { description: ok, content: { application/json: { schema: { $ref: "#/components/schemas/Missing" } } } }
            components:
              schemas:
                Tuple: { type: array, prefixItems: [{ type: string }] }
            """
        let generation = try ProjectFiles.generate(document)
        let messages = generation.diagnostics.map(\.description)
        let expected = [
            "pipeDelimited", "non-JSON content", "a GET body is not sent", "Missing", "{thing-id}",
        ]
        for fragment in expected {
            #expect(messages.contains { $0.contains(fragment) }, "no diagnostic mentions \(fragment): \(messages)")
        }
        let requests = try #require(generation.files.last?.contents)
        #expect(requests.contains("public struct GetThingsByThingIdNotes: ResourceRequest"))
        #expect(requests.contains("public init(thingId: String, ids: [Int]? = nil)"))
        #expect(requests.contains(#"self.path = "things/\(thingId)/notes""#))
    }

    @Test func schemasThatReferToThemselvesEnd() throws {
        let document = """
            openapi: 3.1.0
            info: { title: Loops, version: "1" }
            paths:
              /loops/{id}:
                get:
                  parameters:
                    - { name: id, in: path, required: true, schema: { $ref: "#/components/schemas/A" } }
                  responses: { "200": { description: ok, content: { application/json: { schema: { $ref: "#/components/schemas/Node" } } } } }
            components:
              schemas:
                A: { $ref: "#/components/schemas/B" }
                B: { $ref: "#/components/schemas/A" }
                Self: { $ref: "#/components/schemas/Self" }
                Node:
                  allOf:
                    - $ref: "#/components/schemas/Node"
                    - { type: object, properties: { next: { $ref: "#/components/schemas/Node" } } }
            """
        let generation = try ProjectFiles.generate(document)
        let pointers = generation.diagnostics.map(\.pointer)
        #expect(pointers.contains("#/components/schemas/A") && pointers.contains("#/components/schemas/B"))
        #expect(pointers.contains("#/components/schemas/Self"))
        let schemas = generation.files[0].contents
        #expect(schemas.contains("public typealias A = JSONValue"))
        #expect(schemas.contains("public final class Node: Codable, Hashable, Sendable"))
    }

    @Test func referencesThatLoopAreReportedNotFollowed() throws {
        let document = """
            openapi: 3.1.0
            info: { title: Loops, version: "1" }
            paths:
              /a:
                parameters: [{ $ref: "#/components/parameters/P1" }]
                post:
                  operationId: postA
                  requestBody: { $ref: "#/components/requestBodies/B1" }
                  responses:
                    "200": { $ref: "#/components/responses/R1" }
                    default: { $ref: "#/components/responses/R2" }
            components:
              parameters: { P1: { $ref: "#/components/parameters/P2" }, P2: { $ref: "#/components/parameters/P1" } }
              requestBodies: { B1: { $ref: "#/components/requestBodies/B2" }, B2: { $ref: "#/components/requestBodies/B1" } }
              responses: { R1: { $ref: "#/components/responses/R2" }, R2: { $ref: "#/components/responses/R1" } }
            """
        let generation = try ProjectFiles.generate(document)
        #expect(generation.diagnostics.map(\.pointer) == [
            "#/paths/~1a/parameters/0",
            "#/paths/~1a/post/requestBody",
            "#/paths/~1a/post/responses/200",
            "#/paths/~1a/post/responses/default",
        ])
        #expect(generation.diagnostics.allSatisfy { $0.message.contains("does not resolve") })
        #expect(generation.operationCount == 1)
    }

    /// Each part refers to the one before: merging follows the chain in a loop, not by recursion
    /// that a long enough chain would take past the end of the stack.
    @Test func aLongChainOfAllOfReferencesIsMerged() throws {
        var lines = ["openapi: 3.1.0", "info: { title: Chain, version: '1' }", "paths: {}", "components:", "  schemas:"]
        lines.append("    S0: { type: object, required: [first], properties: { first: { type: string } } }")
        for index in 1..<600 {
            lines.append("    S\(index): { allOf: [{ $ref: '#/components/schemas/S\(index - 1)' }, { type: object }] }")
        }
        let generation = try ProjectFiles.generate(lines.joined(separator: "\n"))
        #expect(generation.schemaCount == 600)
        let schemas = generation.files[0].contents
        #expect(schemas.components(separatedBy: "public var first: String\n").count == 601)
        #expect(generation.diagnostics.isEmpty)
    }
}
