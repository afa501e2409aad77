public import Foundation
internal import OpenAPIKit

/// Generates `ResourceRequest` types and `Codable` schema types from an OpenAPI 3.0 or 3.1
/// document, JSON or YAML.
///
/// ```swift
/// let generator = OpenAPIGenerator(configuration: .init(namespace: "Petstore"))
/// let generation = try generator.generate(from: data, documentName: "openapi.yaml")
/// for file in generation.files { try file.contents.write(to: folder.appending(path: file.name), atomically: true, encoding: .utf8) }
/// ```
///
/// ## Operations
///
/// Each operation becomes a struct named from its `operationId` in UpperCamelCase (`listUsers` →
/// `ListUsers`), or from its method and path (`GET /pets/{id}` → `GetPetsById`). The verb:
/// `GET` → `index`, or `show` when the path ends in a parameter; `POST` → `create`; `PUT` →
/// `update`; `PATCH` → `update` with `.patch`; `DELETE` → `delete`. `HEAD`, `OPTIONS` and `TRACE`
/// take the nearest verb (sent as `GET`), with a diagnostic.
///
/// - Path parameters are labelled initialiser arguments interpolated into the `ResourcePath`, so
///   each stays one encoded segment: `ShowUser(id:)`.
/// - Query parameters are labelled arguments stored in the request's `Query` struct (beside a
///   body when the operation has both). Arrays are written as OpenAPI's `style`/`explode` say
///   (`repeated`, `comma`, or `brackets` for `deepObject`).
/// - Header parameters are labelled arguments sent in `headers`.
/// - The request body is `parameters:`, its type `Parameters`; form and multipart bodies set
///   `bodyEncoding`, and a multipart file is a `MultipartFile`. A body of bytes
///   (`application/octet-stream`, `image/png`, a `format: binary` schema) is a `FileUpload` read
///   from disk as it is sent: the initialiser takes `file:` and `contentType:`, which defaults to
///   the document's media type.
/// - The first success response's JSON schema is `ResourceType` (`Empty` without a body); the
///   error responses' (4XX, 5XX, `default`) `ErrorResponse`, an enum of them when they differ,
///   `ProblemDetails` for `application/problem+json` without a schema.
/// - A success response that is a stream is read as it arrives, as the request's comment shows:
///   `text/event-stream` with `api.events`, `ResourceType` the type of each event's data (from
///   `itemSchema` or `schema`; `String` for text or no schema); `application/jsonl`,
///   `application/x-ndjson` and `application/json-seq` with `api.lines`, `ResourceType` the type
///   of each value (`itemSchema`, or `schema`'s `items` when it is an array). Any other body
///   (`application/octet-stream`, `image/*`, `application/pdf`) is `Empty`, written to a file
///   with `api.download`; a text body that is not JSON is reported as not decoded.
/// - Security requirements are documented on each request: credentials come from the
///   authentication storage, never from generated code.
///
/// ## Schemas
///
/// Objects become structs with a memberwise initialiser, a property optional unless required
/// and not nullable, and `CodingKeys` where a Swift name differs from the wire name. `enum`
/// becomes an enum with an `unknown(_:)` case, so a value added on the server still decodes.
/// `allOf` merges its parts into one struct; `oneOf` and `anyOf` become an enum with a case per
/// alternative, chosen by the discriminator when there is one, else the first that decodes.
/// `additionalProperties` without properties is a dictionary; `format: date-time` is `Date`,
/// `uuid` `UUID`, `int32`/`int64` `Int32`/`Int64`. A schema that stores itself is a `final class`.
/// Anything else (`{}`, `not`) is `JSONValue`, generated beside the schemas, and what could not be
/// expressed is an ``OpenAPIDiagnostic`` with its JSON pointer.
public struct OpenAPIGenerator: Sendable {
    /// The namespace, operations and access level.
    public var configuration: OpenAPIGeneratorConfiguration

    /// A generator with `configuration`.
    public init(configuration: OpenAPIGeneratorConfiguration = OpenAPIGeneratorConfiguration()) {
        self.configuration = configuration
    }

    /// The generated files for the document in `data`, named `documentName` in their header.
    ///
    /// - Throws: ``OpenAPIGeneratorError`` when the document cannot be read. What it holds that
    ///   cannot be expressed is in ``OpenAPIGeneration/diagnostics``, not thrown.
    public func generate(from data: Data, documentName: String) throws(OpenAPIGeneratorError) -> OpenAPIGeneration {
        let document = try DocumentLoader.load(data)
        let operations = selectedOperations(of: document)
        var names = TypeNames(schemaKeys: document.components.schemas.pairs.map(\.key.rawValue))
        let requestNames = operations.map { operation in
            names.requestType(OperationTranslator.typeName(
                operationId: operation.operation.operationId,
                method: operation.method.rawValue.uppercased(),
                path: operation.path
            ))
        }

        var schemas = SchemaTranslator(components: document.components, names: names)
        var declarations = document.components.schemas.pairs.map { key, schema in
            schemas.declaration(forComponent: key.rawValue, schema: schema)
        }
        let security = SecurityDocumentation(document: document)
        var translator = OperationTranslator(document: document, schemas: schemas, security: security)
        let requests = zip(operations, requestNames).map { operation, name in
            translator.translate(operation.operation, method: operation.method, path: operation.path, pathItem: operation.pathItem, name: name)
        }
        schemas = translator.schemas
        RecursionMarker.mark(&declarations)

        let files = FileAssembler(
            configuration: configuration,
            documentName: documentName,
            header: Documentation([document.info.title + " " + document.info.version, document.info.description]),
            notes: servers(of: document) + security.overview
        )
        return OpenAPIGeneration(
            files: [
                files.schemasFile(declarations, usesJSONValue: schemas.usesJSONValue),
                files.requestsFile(requests),
            ],
            diagnostics: security.diagnostics + schemas.diagnostics + unresolvedPathItems(of: document) + notGenerated(document, operations),
            operationCount: requests.count,
            schemaCount: declarations.count
        )
    }

    /// The generated files for the document at `url`, which the command-line tool and the build
    /// plugin's tool read.
    package func generate(contentsOf url: URL) throws(OpenAPIGeneratorError) -> OpenAPIGeneration {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw OpenAPIGeneratorError(kind: .unreadableDocument, detail: "cannot read \(url.path): \(error.localizedDescription)")
        }
        return try generate(from: data, documentName: url.lastPathComponent)
    }

    private struct SelectedOperation {
        var path: OpenAPI.Path
        var pathItem: OpenAPI.PathItem
        var method: OpenAPI.HttpMethod
        var operation: OpenAPI.Operation
    }

    /// The operations in document order, those the configuration names if it names any.
    private func selectedOperations(of document: OpenAPI.Document) -> [SelectedOperation] {
        let wanted = configuration.operations.map(Set.init)
        var result: [SelectedOperation] = []
        for (path, either) in document.paths {
            guard let item = either.pathItemValue else { continue }
            for endpoint in item.endpoints {
                if let wanted, !wanted.contains(endpoint.operation.operationId ?? "") { continue }
                result.append(SelectedOperation(path: path, pathItem: item, method: endpoint.method, operation: endpoint.operation))
            }
        }
        return result
    }

    private func unresolvedPathItems(of document: OpenAPI.Document) -> [OpenAPIDiagnostic] {
        document.paths.compactMap { path, either in
            guard either.pathItemValue == nil else { return nil }
            return OpenAPIDiagnostic(
                pointer: JSONPointer.root.appending("paths").appending(path.rawValue).description,
                message: "a path item given by reference is not generated"
            )
        }
    }

    /// Webhooks and callbacks: requests the server sends, which a client has no type for.
    private func notGenerated(_ document: OpenAPI.Document, _ operations: [SelectedOperation]) -> [OpenAPIDiagnostic] {
        let webhooks = document.webhooks.pairs.map(\.key).map { name in
            OpenAPIDiagnostic(
                pointer: JSONPointer.root.appending("webhooks").appending(name).description,
                message: "a webhook is a request the server sends; no request type is generated for it"
            )
        }
        let callbacks = operations.filter { !$0.operation.callbacks.isEmpty }.map { operation in
            OpenAPIDiagnostic(
                pointer: JSONPointer.root.appending("paths").appending(operation.path.rawValue)
                    .appending(operation.method.rawValue.lowercased()).appending("callbacks").description,
                message: "callbacks are requests the server sends; no request type is generated for them"
            )
        }
        return webhooks + callbacks
    }

    private func servers(of document: OpenAPI.Document) -> [String] {
        let urls = document.servers.map { "`\($0.urlTemplate.absoluteString)`" }
        guard !urls.isEmpty else { return [] }
        return ["Set the configuration's `baseURL` to the server, paths and all: \(urls.joined(separator: ", "))."]
    }
}
