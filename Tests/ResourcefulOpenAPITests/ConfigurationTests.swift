import Foundation
import ResourcefulOpenAPI
import Testing

/// `resourceful-openapi.json`: the namespace, the operations and the access level.
@Suite struct ConfigurationTests {
    static let document = """
        openapi: 3.1.0
        info: { title: C, version: "1" }
        paths:
          /a: { get: { operationId: listA, responses: { "200": { description: ok } } } }
          /b: { get: { operationId: listB, responses: { "200": { description: ok } } } }
        """

    @Test func aConfigurationFileSetsNamespaceOperationsAndAccess() throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "resourceful-openapi-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appending(path: "resourceful-openapi.json")
        try Data(#"{"namespace": "my api", "operations": ["listB"], "accessLevel": "package"}"#.utf8).write(to: file)

        let configuration = try OpenAPIGeneratorConfiguration(contentsOf: file)
        let generation = try ProjectFiles.generate(Self.document, configuration)
        #expect(generation.files.map(\.name) == ["MyApiSchemas.swift", "MyApiRequests.swift"])
        let requests = generation.files[1].contents
        #expect(generation.operationCount == 1)
        #expect(requests.contains("extension MyApi {"))
        #expect(requests.contains("    package struct ListB: ResourceRequest {"))
        #expect(!requests.contains("ListA"))
        #expect(generation.files[0].contents.contains("package enum MyApi {}"))
    }

    @Test func internalAccessWritesNoModifier() throws {
        let generation = try ProjectFiles.generate(Self.document, .init(accessLevel: .internal))
        #expect(generation.files[1].contents.contains("\nstruct ListA: ResourceRequest {"))
        #expect(generation.files[1].contents.contains("\nimport Resourceful"))
    }

    @Test(arguments: [
        (#"{"namespace": 3}"#, "namespace"),
        (#"{"accessLevel": "open"}"#, "accessLevel"),
        (#"{"namespace": "---"}"#, "no letters"),
        ("not json", "resourceful-openapi.json"),
        (#"{"namespace": "X", "acessLevel": "public"}"#, "`acessLevel` is not a known key (the keys are `accessLevel`, `namespace`, `operations`)"),
        (#"{"namespace": "\b\b\b-_"}"#, "the namespace holds no letters or digits"),
        (#"{"na\u001b[2Jme": "X"}"#, "a key is not known"),
    ])
    func anInvalidConfigurationIsATypedError(text: String, mention: String) throws {
        let file = FileManager.default.temporaryDirectory.appending(path: "\(UUID().uuidString)-resourceful-openapi.json")
        try Data(text.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let error = try #require(throws: OpenAPIGeneratorError.self) { try OpenAPIGeneratorConfiguration(contentsOf: file) }
        #expect(error.kind == .invalidConfiguration)
        #expect(error.description.contains(mention), "\(error)")
        #expect(!error.description.contains("\u{8}") && !error.description.contains("\u{1B}"), "\(error)")
    }

    @Test func aSchemaKeyForEditorsIsAccepted() throws {
        let file = FileManager.default.temporaryDirectory.appending(path: "\(UUID().uuidString)-resourceful-openapi.json")
        try Data(#"{"$schema": "https://example.com/resourceful-openapi.schema.json", "namespace": "Pets"}"#.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(try OpenAPIGeneratorConfiguration(contentsOf: file).namespace == "Pets")
    }
}
