import Foundation
import ResourcefulOpenAPI
import Testing

/// Each spec in `Specs/` generates exactly the files in `Tests/OpenAPIGolden`, which the package
/// compiles (warnings are errors) and `GeneratedRequestsTests` calls. To accept a deliberate change
/// of the output: `RESOURCEFUL_UPDATE_GOLDEN=1 swift test --filter GoldenFileTests`, then review
/// the diff.
@Suite struct GoldenFileTests {
    static let specs = ["users", "shapes", "streams"]

    @Test(arguments: specs)
    func generatedFilesEqualTheGoldenFiles(spec: String) throws {
        let generation = try ProjectFiles.generate(spec: spec)
        #expect(generation.files.map(\.name) == ["\(spec.capitalized)Schemas.swift", "\(spec.capitalized)Requests.swift"])
        for file in generation.files {
            let url = ProjectFiles.golden.appending(path: file.name)
            if ProcessInfo.processInfo.environment["RESOURCEFUL_UPDATE_GOLDEN"] == "1" {
                try Data(file.contents.utf8).write(to: url)
            }
            let golden = try String(contentsOf: url, encoding: .utf8)
            #expect(file.contents == golden, "\(file.name) differs from its golden file")
        }
    }

    @Test(arguments: specs)
    func theSameDocumentGivesTheSameBytes(spec: String) throws {
        let first = try ProjectFiles.generate(spec: spec)
        let second = try ProjectFiles.generate(spec: spec)
        #expect(first.files == second.files)
        #expect(first.diagnostics == second.diagnostics)
    }

    @Test func generatedTextIsFormattedAndDocumented() throws {
        for spec in Self.specs {
            for file in try ProjectFiles.generate(spec: spec).files {
                let lines = file.contents.split(separator: "\n", omittingEmptySubsequences: false)
                #expect(!lines.contains { $0.hasSuffix(" ") }, "\(file.name): trailing spaces")
                #expect(!lines.contains { $0.contains("\t") }, "\(file.name): tabs")
                #expect(!file.contents.contains("\n\n\n"), "\(file.name): two empty lines")
                #expect(file.contents.hasSuffix("}\n"))
                // Every request type is documented with its method and path.
                let requests = lines.indices.filter { lines[$0].contains(": ResourceRequest {") }
                for index in requests {
                    let comment = lines[..<index].reversed().prefix { $0.trimmingCharacters(in: .whitespaces).hasPrefix("///") }
                    #expect(comment.contains { $0.contains("`, sent as `") }, "\(lines[index])")
                }
            }
        }
    }
}
