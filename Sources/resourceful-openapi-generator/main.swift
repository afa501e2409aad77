// The build plugin's tool: `resourceful-openapi-generator DOCUMENT OUTPUT-FOLDER [CONFIGURATION]`.
// Writes the generated files into the folder and the diagnostics to standard error as warnings.

import Foundation
import ResourcefulOpenAPI

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 2 || arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: resourceful-openapi-generator DOCUMENT OUTPUT-FOLDER [CONFIGURATION]\n".utf8))
    exit(64)
}
let document = URL(fileURLWithPath: arguments[arguments.startIndex])
let output = URL(fileURLWithPath: arguments[arguments.startIndex + 1])
do {
    var configuration = OpenAPIGeneratorConfiguration()
    if arguments.count == 3 {
        configuration = try OpenAPIGeneratorConfiguration(contentsOf: URL(fileURLWithPath: arguments[arguments.startIndex + 2]))
    }
    let generation = try OpenAPIGenerator(configuration: configuration)
        .generate(from: Data(contentsOf: document), documentName: document.lastPathComponent)
    try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
    for file in generation.files {
        try Data(file.contents.utf8).write(to: output.appendingPathComponent(file.name), options: .atomic)
    }
    for diagnostic in generation.diagnostics {
        FileHandle.standardError.write(Data("\(document.path): warning: \(diagnostic)\n".utf8))
    }
} catch {
    FileHandle.standardError.write(Data("\(document.path): error: \(error)\n".utf8))
    exit(1)
}
