import Foundation

/// The standard JSON corpus in `Tests/Fixtures/json/` (nativejson-benchmark's documents; see
/// the licence and provenance there), read in place.
enum CorpusDocuments {
    /// `Tests/Fixtures/json`, from this file's place in the repository (also through the
    /// benchmarks' link to this folder, which `#filePath` names the same way).
    static let directory: URL = {
        var url = URL(fileURLWithPath: #filePath)
        // Corpus/ → ResourcefulJSONTests/ → Tests/.
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.appending(path: "Fixtures/json")
    }()

    static func load(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appending(path: name))
    }
}
