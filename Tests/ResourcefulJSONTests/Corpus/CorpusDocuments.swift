import Foundation

/// The standard JSON corpus in `../shared/fixtures/json/` (nativejson-benchmark's documents; see
/// the licence and provenance there), read in place.
enum CorpusDocuments {
    /// `../shared/fixtures/json`, from this file's place in the repository (also through the
    /// benchmarks' link to this folder, which `#filePath` names the same way).
    static let directory: URL = {
        var url = URL(fileURLWithPath: #filePath)
        // Corpus/ → ResourcefulJSONTests/ → Tests/ → the repository → beside it.
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url.deletingLastPathComponent().appending(path: "shared/fixtures/json")
    }()

    static func load(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appending(path: name))
    }
}
