import Foundation
import ResourcefulOpenAPI
import Testing

/// The public documents in `Tests/Fixtures/openapi` (real APIs, and the OpenAPI Initiative's
/// and ReadMe's example suites; 3.0 and 3.1) all generate, with what they hold that cannot be
/// expressed reported. `make examples` compiles what they generate.
@Suite struct FixtureDocumentsTests {
    struct Expectation: Sendable, CustomTestStringConvertible {
        var file: String
        var requests: Int
        var schemas: Int
        /// Diagnostics by the start of their message.
        var unexpressed: [String: Int]
        var testDescription: String { file }
    }

    static let expectations = [
        Expectation(file: "petstore-expanded.yaml", requests: 4, schemas: 3, unexpressed: [:]),
        Expectation(file: "uspto.yaml", requests: 3, schemas: 1, unexpressed: [:]),
        Expectation(file: "readme-oas-examples-3.0-yaml-star-trek.yaml", requests: 120, schemas: 222, unexpressed: [:]),
        Expectation(file: "readme-oas-examples-3.1-yaml-train-travel.yaml", requests: 7, schemas: 9, unexpressed: [
            "a webhook is a request the server sends": 1,
        ]),
        Expectation(file: "readme-oas-examples-3.0-yaml-discriminators.yaml", requests: 10, schemas: 24, unexpressed: [:]),
        Expectation(file: "readme-oas-examples-3.0-yaml-polymorphism.yaml", requests: 13, schemas: 7, unexpressed: [:]),
        Expectation(file: "readme-oas-examples-3.0-yaml-schema-types.yaml", requests: 21, schemas: 2, unexpressed: [
            "an allOf part that is not an object": 6,
        ]),
        Expectation(file: "readme-oas-examples-3.0-yaml-parameters-style.yaml", requests: 25, schemas: 0, unexpressed: [
            "a cookie parameter": 9,
            "a path parameter that is not a plain value": 14,
            "a header parameter that is not a plain value": 6,
            "`style: matrix`": 6,
            "`style: label`": 6,
            "`style: spaceDelimited`": 2,
            "`style: pipeDelimited`": 2,
            "an object in `style: form`": 3,
        ]),
    ]

    @Test(arguments: expectations)
    func eachDocumentGenerates(expectation: Expectation) throws {
        let url = ProjectFiles.fixtures.appending(path: expectation.file)
        let data = try Data(contentsOf: url)
        let generation = try OpenAPIGenerator(configuration: .init(namespace: "Fixture")).generate(from: data, documentName: expectation.file)
        #expect(generation.operationCount == expectation.requests)
        #expect(generation.schemaCount == expectation.schemas)
        var counted: [String: Int] = [:]
        for diagnostic in generation.diagnostics {
            let key = expectation.unexpressed.keys.first { diagnostic.message.hasPrefix($0) } ?? diagnostic.message
            counted[key, default: 0] += 1
            #expect(diagnostic.pointer.hasPrefix("#/"))
        }
        #expect(counted == expectation.unexpressed)
        #expect(generation.files.allSatisfy { !$0.contents.isEmpty })
    }
}
