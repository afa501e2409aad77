// The build plugin's tool:
// `resourceful-openapi-generator DOCUMENT SCHEMAS-FILE REQUESTS-FILE [CONFIGURATION]`.
// Writes the two generated files (only when their text changed) and the diagnostics to standard
// error as warnings, which SwiftPM shows in the build.

import Foundation
import ResourcefulOpenAPI

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 3 || arguments.count == 4 else {
    FileHandle.standardError.write(Data("usage: resourceful-openapi-generator DOCUMENT SCHEMAS-FILE REQUESTS-FILE [CONFIGURATION]\n".utf8))
    exit(64)
}
let document = URL(fileURLWithPath: arguments[0])
let outputs = [URL(fileURLWithPath: arguments[1]), URL(fileURLWithPath: arguments[2])]
do {
    var configuration = OpenAPIGeneratorConfiguration()
    if arguments.count == 4 {
        configuration = try OpenAPIGeneratorConfiguration(contentsOf: URL(fileURLWithPath: arguments[3]))
    }
    let data: Data
    do {
        data = try Data(contentsOf: document)
    } catch {
        throw OpenAPIGeneratorError(kind: .unreadableDocument, detail: "cannot read it: \(error.localizedDescription)")
    }
    let generation = try OpenAPIGenerator(configuration: configuration).generate(from: data, documentName: document.lastPathComponent)
    for (file, url) in zip(generation.files, outputs) {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        if (try? String(contentsOf: url, encoding: .utf8)) == file.contents { continue }
        try Data(file.contents.utf8).write(to: url, options: .atomic)
    }
    for diagnostic in generation.diagnostics {
        FileHandle.standardError.write(Data("\(document.path): warning: \(diagnostic)\n".utf8))
    }
} catch {
    FileHandle.standardError.write(Data("\(document.path): error: \(error)\n".utf8))
    exit(1)
}
