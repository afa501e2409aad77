import Foundation

/// The standard JSON corpus in `Tests/Fixtures/json/` (nativejson-benchmark's documents; see
/// the licence and provenance there), read in place.
enum CorpusDocuments {
    /// `Tests/Fixtures/json`, from this file's place in the repository: `#filePath` with its
    /// links resolved, as the benchmarks compile this file through their link to this folder.
    static let directory: URL = {
        var url = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        // Corpus/ → ResourcefulJSONTests/ → Tests/.
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.appending(path: "Fixtures/json")
    }()

    static func load(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appending(path: name))
    }
}
