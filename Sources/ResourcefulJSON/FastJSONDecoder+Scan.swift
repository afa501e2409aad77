public import Foundation

extension FastJSONDecoder {
    /// Scans `data` onto a tape, as ``decode(_:from:)`` does before it decodes anything, and
    /// returns the number of tape words: the cost of the scan alone, for benchmarks.
    ///
    /// - Throws: `DecodingError.dataCorrupted` where the structure is broken.
    @_spi(Benchmarking)
    public static func scan(_ data: Data) throws -> Int {
        try data.withUnsafeBytes { raw throws -> Int in
            let document = JSONDocument(borrowing: raw)
            var scanner = JSONScanner(document: document)
            do throws(JSONSyntaxError) {
                try scanner.scanIndexed()
            } catch {
                throw JSONDecoding.corrupted(error, path: [])
            }
            return document.tapeCount
        }
    }

    /// Runs stage one alone on `data` (quotes, escapes, control and non-ASCII bytes, UTF-8) and
    /// returns the number of quotes it found, for benchmarks.
    @_spi(Benchmarking)
    public static func stageOne(_ data: Data) -> Int {
        data.withUnsafeBytes { raw -> Int in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard let base = bytes.baseAddress else { return 0 }
            let index = JSONStructuralIndex(base, count: bytes.count, origin: 0)
            return index.quoteCount
        }
    }
}
