public import Foundation

/// How the generator names and scopes what it writes: the command line's options, or a target's
/// `resourceful-openapi.json` for the build plugin.
///
/// ```json
/// { "namespace": "Petstore", "operations": ["listPets", "showPetById"], "accessLevel": "internal" }
/// ```
public struct OpenAPIGeneratorConfiguration: Sendable, Hashable, Codable {
    /// The access level of the generated declarations.
    public enum AccessLevel: String, Sendable, Hashable, Codable {
        /// `public`: for a library that offers the requests to its users.
        case `public`
        /// `package`: for the targets of one package.
        case `package`
        /// `internal`: for the target that holds the generated files.
        case `internal`
    }

    /// An enum that holds every generated type (`Petstore.ListPets`), and the prefix of the
    /// generated files' names; nil declares the types at the top level.
    public var namespace: String?
    /// The `operationId`s to generate; nil for every operation. The schemas are all generated.
    public var operations: [String]?
    /// The access level of the generated declarations: `public` unless set.
    public var accessLevel: AccessLevel?

    /// A configuration; every part optional.
    public init(namespace: String? = nil, operations: [String]? = nil, accessLevel: AccessLevel? = nil) {
        self.namespace = namespace
        self.operations = operations
        self.accessLevel = accessLevel
    }

    /// The file names the generator writes for this configuration, in order: the schemas, then
    /// the requests.
    var fileNames: [String] {
        let prefix = namespace.map(SwiftNames.typeName) ?? ""
        return [prefix + "Schemas.swift", prefix + "Requests.swift"]
    }
}

extension OpenAPIGeneratorConfiguration {
    /// The configuration in a `resourceful-openapi.json` file.
    ///
    /// - Throws: ``OpenAPIGeneratorError`` with ``OpenAPIGeneratorError/Kind-swift.enum/invalidConfiguration``
    ///   for a file that cannot be read or does not decode, naming the field.
    public init(contentsOf url: URL) throws(OpenAPIGeneratorError) {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw OpenAPIGeneratorError(kind: .invalidConfiguration, detail: "cannot read \(url.path): \(error.localizedDescription)")
        }
        do {
            self = try JSONDecoder().decode(Self.self, from: data)
        } catch let DecodingError.dataCorrupted(context), let DecodingError.typeMismatch(_, context) {
            throw OpenAPIGeneratorError(kind: .invalidConfiguration, detail: "\(url.lastPathComponent): \(Self.place(context.codingPath)) \(context.debugDescription)")
        } catch {
            throw OpenAPIGeneratorError(kind: .invalidConfiguration, detail: "\(url.lastPathComponent): \(error)")
        }
        // A misspelt key would leave its setting at the default without a word: it is named,
        // with the keys there are.
        // `$schema` names a JSON Schema for editors, as in many tools' files.
        let known: Set<String> = ["namespace", "operations", "accessLevel"]
        if let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] {
            let unknown = object.keys.filter { !known.contains($0) && $0 != "$schema" }.sorted()
            if let first = unknown.first {
                let shown = Self.isPlain(first)
                throw OpenAPIGeneratorError(
                    kind: .invalidConfiguration,
                    detail: "\(url.lastPathComponent): \(shown ? "`\(first)` is not a known key" : "a key is not known")"
                        + " (the keys are \(known.sorted().map { "`\($0)`" }.joined(separator: ", ")))"
                )
            }
        }
        if let namespace, SwiftNames.words(namespace).isEmpty {
            let shown = Self.isPlain(namespace) ? " '\(namespace)'" : ""
            throw OpenAPIGeneratorError(kind: .invalidConfiguration, detail: "\(url.lastPathComponent): the namespace\(shown) holds no letters or digits")
        }
    }

    /// Whether `text` may be repeated in a message: short, printable ASCII without spaces (a file
    /// not written by the person could hold a terminal's control sequences).
    private static func isPlain(_ text: String) -> Bool {
        text.count <= 64 && text.allSatisfy { $0.asciiValue.map { $0 >= 0x21 && $0 < 0x7F } == true }
    }

    private static func place(_ path: [any CodingKey]) -> String {
        path.isEmpty ? "" : "`" + path.map(\.stringValue).joined(separator: ".") + "`:"
    }
}
