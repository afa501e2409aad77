package import Foundation

/// What the generator made of a document: Swift files and what it could not express.
public struct OpenAPIGeneration: Sendable {
    /// A generated Swift file.
    public struct File: Sendable, Hashable {
        /// The file's name, without a folder: `PetstoreRequests.swift`.
        public var name: String
        /// The file's text: the same document and configuration always give the same bytes.
        public var contents: String

        /// Whether the file at `url` holds these bytes already.
        package func isWritten(at url: URL) -> Bool {
            (try? String(contentsOf: url, encoding: .utf8)) == contents
        }

        /// Writes the file at `url`, making its folder, unless the file there already holds these
        /// bytes: a build then does not see an unchanged file as new.
        package func write(to url: URL) throws {
            if isWritten(at: url) { return }
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(contents.utf8).write(to: url, options: .atomic)
        }
    }

    /// The files, in ``OpenAPIGeneratorConfiguration/fileNames``'s order.
    public var files: [File]
    /// What the document holds that the generated code does not express, in document order.
    public var diagnostics: [OpenAPIDiagnostic]
    /// How many request types were generated.
    public var operationCount: Int
    /// How many schema types were generated.
    public var schemaCount: Int
}
