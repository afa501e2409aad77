import Foundation
import ResourcefulOpenAPI
import Testing

/// Text from the document (summaries, descriptions, paths, wire names, enum values) reaches the
/// generated files only inside comments and string literals, and never ends either early.
@Suite struct DocumentTextTests {
    /// Each line break Swift or an editor knows, and a right-to-left override, in every place a
    /// document's text is written out.
    static let document = #"""
        openapi: 3.1.0
        info: { title: "T\rpublic let injected0 = 0 //", version: "1", description: "a\u2028public let injected1 = 1 //" }
        paths:
          "/a\rpublic let injected2 = 2 //":
            get:
              operationId: getA
              summary: "harmless\rpublic let injected3 = 3 //"
              description: "line\u0085public let injected4 = 4 //\u2029public let injected5 = 5 //"
              parameters:
                - { name: "X-Key\r\npublic let injected6 = 6 //", in: header, description: "d\rpublic let injected7 = 7 //", schema: { type: string } }
              responses:
                "200":
                  description: ok
                  content:
                    application/json:
                      schema:
                        type: object
                        description: "\u202Epublic let injected8 = 8 //"
                        properties:
                          "a\u202Eb": { type: string, enum: ["x\ry", "\u202Ez"] }
        """#

    @Test func itNeverBecomesCode() throws {
        let generation = try ProjectFiles.generate(Self.document)
        #expect(generation.operationCount == 1)
        for file in generation.files {
            for scalar in file.contents.unicodeScalars where scalar != "\n" {
                let category = scalar.properties.generalCategory
                #expect(![.control, .format, .lineSeparator, .paragraphSeparator].contains(category), "U+\(String(scalar.value, radix: 16)) in \(file.name)")
            }
            for line in file.contents.split(separator: "\n") where line.contains("injected") {
                #expect(!Self.code(in: line).contains("injected"), "\(file.name): \(line)")
            }
        }
        let requests = try #require(generation.files.last?.contents)
        #expect(requests.contains(#"headers["X-Key\r\npublic let injected6 = 6 //"]"#))
        let schemas = generation.files.contains { $0.contents.contains(#"case aB = "a\u{202e}b""#) }
        #expect(schemas)
        #expect(generation.files.contains { $0.contents.contains(#"case "x\ry": self = .xY"#) })
    }

    /// A line of Swift without its string literals' contents and its comment.
    static func code(in line: Substring) -> String {
        var code = ""
        var inLiteral = false
        var escaped = false
        var previous: Character?
        for character in line {
            if inLiteral {
                if escaped {
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    inLiteral = false
                    code.append(character)
                }
            } else if character == "/", previous == "/" {
                code.removeLast()
                break
            } else {
                if character == "\"" { inLiteral = true }
                code.append(character)
            }
            previous = character
        }
        return code
    }
}
