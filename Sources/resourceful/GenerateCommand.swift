#if canImport(ResourcefulOpenAPI)
import ArgumentParser
import Foundation
import Resourceful
import ResourcefulOpenAPI

/// The commands that need the OpenAPI generator (left out of a build without it).
let generatorCommands: [any ParsableCommand.Type] = [GenerateCommand.self]

/// `resourceful generate --openapi SPEC --output DIR`: ResourceRequest types from an OpenAPI document.
struct GenerateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Generate ResourceRequest and Codable types from an OpenAPI 3.0 or 3.1 document.",
        discussion: """
            Writes two files into the output folder: NAMESPACESchemas.swift and NAMESPACERequests.swift. \
            What the document holds that the generated code cannot express is printed as warnings, \
            with its JSON pointer. Exit status: 0 done, 1 the files are out of date (--check), \
            2 the document or configuration cannot be read, or a file cannot be written (only a \
            regular file is replaced).
            """
    )

    @Option(name: .customLong("openapi"), help: "The OpenAPI document, JSON or YAML.")
    var document: String

    @Option(help: "The folder the Swift files go into (made when missing).")
    var output: String

    @Option(help: "An enum that holds every generated type, and the files' name prefix.")
    var namespace: String?

    @Option(name: .customLong("operation"), help: "Generate only this operationId (repeat for more).")
    var operations: [String] = []

    @Option(help: "The generated declarations' access level: public, package or internal.")
    var accessLevel: String?

    @Option(help: "A resourceful-openapi.json whose settings the options above override.")
    var config: String?

    @Flag(help: "Write nothing; exit 1 when the files in the output folder are not what would be generated.")
    var check = false

    func validate() throws {
        if let accessLevel, OpenAPIGeneratorConfiguration.AccessLevel(rawValue: accessLevel) == nil {
            throw ValidationError("--access-level must be public, package or internal, not '\(accessLevel)'")
        }
    }

    func run() throws {
        let generation: OpenAPIGeneration
        let start = ContinuousClock.now
        // Said in words, not as Foundation's "The operation could not be completed".
        for (flag, path) in [("--openapi", Optional(document)), ("--config", config)] {
            guard let path, !FileManager.default.fileExists(atPath: path) else { continue }
            Self.printError("resourceful: cannot read \(path) (\(flag)): it does not exist")
            throw ExitCode(2)
        }
        do {
            let generator = OpenAPIGenerator(configuration: try generatorConfiguration())
            generation = try generator.generate(contentsOf: URL(fileURLWithPath: document, isDirectory: false))
        } catch {
            Self.printError("resourceful: \(error)")
            throw ExitCode(2)
        }
        for diagnostic in generation.diagnostics {
            Self.printError("warning: \(diagnostic)")
        }
        let folder = URL(fileURLWithPath: output, isDirectory: true)
        if check {
            let stale = generation.files.filter { !$0.isWritten(at: folder.appendingPathComponent($0.name, isDirectory: false)) }
            guard stale.isEmpty else {
                Self.printError("resourceful: out of date in \(output): \(stale.map(\.name).joined(separator: ", ")); run without --check to generate them")
                throw ExitCode(1)
            }
            print("Up to date: \(generation.files.map(\.name).joined(separator: ", "))")
            return
        }
        // Each file replaced as a download is: only a regular file (or nothing) at its name,
        // through a temporary file renamed into place, never keeping set-ID bits. Every
        // destination is checked before the folder is made or a file written: one refused (a
        // FIFO, a device) leaves them all as they were.
        let files = generation.files.map { (path: folder.appendingPathComponent($0.name, isDirectory: false).path, bytes: Data($0.contents.utf8)) }
        do {
            for file in files { try OutputFile.check(file.path) }
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try OutputFile.write(files)
        } catch let error as OutputFileError {
            Self.printError("resourceful: \(error)")
            throw ExitCode(2)
        } catch {
            Self.printError("resourceful: \(output) cannot be made: \(error.localizedDescription)")
            throw ExitCode(2)
        }
        let elapsed = (ContinuousClock.now - start).components
        let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        print(
            "Generated \(generation.operationCount) requests and \(generation.schemaCount) schema types into \(output) "
                + "in \(String(format: "%.2f", seconds)) s; \(generation.diagnostics.count) constructs not expressed."
        )
    }

    private func generatorConfiguration() throws(OpenAPIGeneratorError) -> OpenAPIGeneratorConfiguration {
        var configuration = OpenAPIGeneratorConfiguration()
        if let config {
            configuration = try OpenAPIGeneratorConfiguration(contentsOf: URL(fileURLWithPath: config, isDirectory: false))
        }
        if let namespace { configuration.namespace = namespace }
        if !operations.isEmpty { configuration.operations = operations }
        if let accessLevel { configuration.accessLevel = OpenAPIGeneratorConfiguration.AccessLevel(rawValue: accessLevel) }
        return configuration
    }

    private static func printError(_ line: String) {
        StandardStreams.error(line + "\n")
    }
}
#else
import ArgumentParser

let generatorCommands: [any ParsableCommand.Type] = []
#endif
