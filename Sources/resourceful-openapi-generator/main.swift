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
let document = URL(fileURLWithPath: arguments[0], isDirectory: false)
let outputs = [URL(fileURLWithPath: arguments[1], isDirectory: false), URL(fileURLWithPath: arguments[2], isDirectory: false)]
do {
    var configuration = OpenAPIGeneratorConfiguration()
    if arguments.count == 4 {
        configuration = try OpenAPIGeneratorConfiguration(contentsOf: URL(fileURLWithPath: arguments[3], isDirectory: false))
    }
    let generation = try OpenAPIGenerator(configuration: configuration).generate(contentsOf: document)
    for (file, url) in zip(generation.files, outputs) {
        try file.write(to: url)
    }
    for diagnostic in generation.diagnostics {
        FileHandle.standardError.write(Data("\(document.path): warning: \(diagnostic)\n".utf8))
    }
} catch {
    FileHandle.standardError.write(Data("\(document.path): error: \(error)\n".utf8))
    exit(1)
}
