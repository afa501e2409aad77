import Foundation
import ResourcefulOpenAPI

/// The project's files the generator's tests read: the specs, the golden files and the public
/// OpenAPI documents in `Tests/Fixtures/openapi`.
enum ProjectFiles {
    /// The package's root, from this file's place in it.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let specs = root.appending(path: "Tests/ResourcefulOpenAPITests/Specs")
    static let golden = root.appending(path: "Tests/OpenAPIGolden")
    /// `Tests/Fixtures/openapi`: public documents, read in place.
    static let fixtures = root.appending(path: "Tests/Fixtures/openapi")

    /// The spec `name` (`users` → `Specs/users.yaml`), generated under the namespace `Name`.
    static func generate(spec name: String) throws -> OpenAPIGeneration {
        let data = try Data(contentsOf: specs.appending(path: "\(name).yaml"))
        let generator = OpenAPIGenerator(configuration: OpenAPIGeneratorConfiguration(namespace: name))
        return try generator.generate(from: data, documentName: "\(name).yaml")
    }

    /// `document` (YAML or JSON text) generated with `configuration`.
    static func generate(_ document: String, _ configuration: OpenAPIGeneratorConfiguration = .init()) throws -> OpenAPIGeneration {
        try OpenAPIGenerator(configuration: configuration).generate(from: Data(document.utf8), documentName: "test.yaml")
    }
}
