import Foundation
import PackagePlugin

/// Generates `ResourceRequest` and schema types from the target's `openapi.yaml`, `openapi.yml`
/// or `openapi.json`, with the settings of an optional `resourceful-openapi.json` beside it
/// (`namespace`, `operations`, `accessLevel`). The files are made at build time and never checked in.
@main
struct ResourcefulOpenAPIPlugin: BuildToolPlugin {
    static let documentNames: Set<String> = ["openapi.yaml", "openapi.yml", "openapi.json"]
    static let configurationName = "resourceful-openapi.json"

    func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let files = target.sourceFiles.map(\.url)
        let documents = files.filter { Self.documentNames.contains($0.lastPathComponent) }
        guard let document = documents.first else {
            throw PluginError("target \(target.name) has no openapi.yaml, openapi.yml or openapi.json")
        }
        guard documents.count == 1 else {
            throw PluginError("target \(target.name) has more than one OpenAPI document: \(documents.map(\.lastPathComponent).joined(separator: ", "))")
        }
        let configuration = files.first { $0.lastPathComponent == Self.configurationName }
        let output = context.pluginWorkDirectoryURL.appending(path: "GeneratedSources")
        let schemas = output.appending(path: "ResourcefulOpenAPI.Schemas.swift")
        let requests = output.appending(path: "ResourcefulOpenAPI.Requests.swift")
        var arguments = [document.path(), schemas.path(), requests.path()]
        if let configuration { arguments.append(configuration.path()) }
        return [
            .buildCommand(
                displayName: "Generating Resourceful requests from \(document.lastPathComponent)",
                executable: try context.tool(named: "resourceful-openapi-generator").url,
                arguments: arguments,
                inputFiles: [document] + (configuration.map { [$0] } ?? []),
                outputFiles: [schemas, requests]
            ),
        ]
    }
}

struct PluginError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
