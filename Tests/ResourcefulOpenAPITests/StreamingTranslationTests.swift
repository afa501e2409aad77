import Foundation
import ResourcefulOpenAPI
import Testing

/// How streamed and binary media types are translated: which `ResourceType` and call a response
/// gets, which body a request sends, and what is still reported.
@Suite struct StreamingTranslationTests {
    /// A document whose one path, `/things`, has `operation` under `method`.
    static func document(_ method: String = "get", _ operation: String) -> String {
        """
        openapi: 3.1.0
        info: { title: Media, version: "1" }
        paths:
          /things:
            \(method):
              operationId: thing
        \(operation.split(separator: "\n", omittingEmptySubsequences: false).map { "      " + $0 }.joined(separator: "\n"))
        components:
          schemas:
            Tick: { type: object, required: [n], properties: { n: { type: integer } } }
        """
    }

    static func requests(_ operation: String, method: String = "get") throws -> (code: String, diagnostics: [String]) {
        let generation = try ProjectFiles.generate(document(method, operation))
        return (try #require(generation.files.last?.contents), generation.diagnostics.map(\.description))
    }

    @Test func eventsWhoseDataIsTextOrUndescribedAreStrings() throws {
        // OpenAPI 3.2's way: each event an object, its data a string holding JSON.
        let described = try Self.requests("""
            responses:
              "200":
                description: ok
                content:
                  text/event-stream:
                    itemSchema:
                      type: object
                      properties:
                        event: { type: string }
                        data: { type: string, contentMediaType: application/json }
            """)
        #expect(described.code.contains("public typealias ResourceType = String"))
        #expect(described.code.contains("for try await event in api.events(Thing()) {"))
        #expect(described.diagnostics.isEmpty)

        let bare = try Self.requests("responses: { \"200\": { description: ok, content: { text/event-stream: {} } } }")
        #expect(bare.code.contains("public typealias ResourceType = String"))
        #expect(bare.diagnostics.isEmpty)
    }

    @Test func eventsOfDifferentTypesWithDifferentDataAreJSONValue() throws {
        let result = try Self.requests("""
            responses:
              "200":
                description: ok
                content:
                  text/event-stream:
                    itemSchema:
                      oneOf:
                        - { type: object, properties: { event: { const: tick }, data: { $ref: "#/components/schemas/Tick" } } }
                        - { type: object, properties: { event: { const: note }, data: { type: object, properties: { text: { type: string } } } } }
            """)
        #expect(result.code.contains("public typealias ResourceType = JSONValue"))
        #expect(result.diagnostics == ["#/paths/~1things/get/responses/200/content/text~1event-stream/itemSchema: the events' data differ by event type; each event's data is JSONValue"])
    }

    @Test func everyJSONSequenceMediaTypeIsReadAsLines() throws {
        for mediaType in ["application/jsonl", "application/x-ndjson", "application/json-seq"] {
            let result = try Self.requests("responses: { \"200\": { description: ok, content: { \(mediaType): { schema: { $ref: \"#/components/schemas/Tick\" } } } } }")
            #expect(result.code.contains("public typealias ResourceType = Tick"), "\(mediaType)")
            #expect(result.code.contains("for try await item in api.lines(Thing()) {"), "\(mediaType)")
            #expect(result.diagnostics.isEmpty, "\(mediaType)")
        }
        let untyped = try Self.requests("responses: { \"200\": { description: ok, content: { application/jsonl: {} } } }")
        #expect(untyped.code.contains("public typealias ResourceType = JSONValue"))
    }

    @Test func jsonIsPreferredWhenAResponseAlsoOffersAStream() throws {
        let result = try Self.requests("""
            responses:
              "200":
                description: ok
                content:
                  text/event-stream: { schema: { type: string } }
                  application/json: { schema: { $ref: "#/components/schemas/Tick" } }
            """)
        #expect(result.code.contains("public typealias ResourceType = Tick"))
        #expect(!result.code.contains("api.events"))
    }

    @Test func binaryResponsesAreDownloadsAndTextIsReportedAsNotDecoded() throws {
        for content in ["application/pdf: {}", "application/zip: {}", "image/png: {}", "text/plain: { schema: { type: string, format: binary } }"] {
            let result = try Self.requests("responses: { \"200\": { description: ok, content: { \(content) } } }")
            #expect(result.code.contains("public typealias ResourceType = Empty"), "\(content)")
            #expect(result.code.contains("let result = try await api.download(Thing(), to: file)"), "\(content)")
            #expect(result.diagnostics.isEmpty, "\(content)")
        }
        let text = try Self.requests("responses: { \"200\": { description: ok, content: { text/csv: { schema: { type: string } } } } }")
        #expect(text.code.contains("api.download(Thing(), to: file)"))
        #expect(text.diagnostics == ["#/paths/~1things/get/responses/200/content: a body that is not JSON (text/csv) is not decoded; `api.download` writes it to a file"])
    }

    @Test func aBodyOfOnlyARangeOfMediaTypesNeedsItsTypeGiven() throws {
        let result = try Self.requests("""
            requestBody: { content: { "image/*": {} } }
            responses: { "204": { description: stored } }
            """, method: "post")
        #expect(result.code.contains("public typealias Parameters = FileUpload"))
        #expect(result.code.contains("public init(file: URL, contentType: String)"))
        #expect(result.code.contains("let result = try await api.call(Thing(file: file, contentType: contentType))"))
        #expect(result.code.contains("public import Foundation"))
        #expect(result.diagnostics.isEmpty)
    }

    @Test func aFormatBinarySchemaMakesAnyMediaTypeAnUpload() throws {
        let result = try Self.requests("""
            parameters: [{ name: file, in: query, schema: { type: string } }]
            requestBody: { content: { application/x-custom: { schema: { type: string, format: binary } } } }
            responses: { "204": { description: stored } }
            """, method: "put")
        // The query parameter named `file` keeps its label; the file takes the next.
        #expect(result.code.contains(#"public init(file2: URL, file: String? = nil, contentType: String = "application/x-custom")"#))
        #expect(result.code.contains("self.parameters = FileUpload(file2, contentType: contentType)"))
        #expect(result.diagnostics.isEmpty)
    }

    @Test func aTextBodyIsStillReportedAndNotSent() throws {
        let result = try Self.requests("""
            requestBody: { content: { text/plain: { schema: { type: string } } } }
            responses: { "204": { description: stored } }
            """, method: "post")
        #expect(!result.code.contains("parameters"))
        #expect(result.diagnostics == ["#/paths/~1things/post/requestBody/content: no JSON, form, multipart or binary body (text/plain); no body is sent"])
    }
}
