import Benchmark
import Foundation
@_spi(Benchmarking) import ResourcefulJSON

/// The standard corpus (`Tests/Fixtures/json/`, models in `Corpus/`, shared with the
/// decoder's tests), decoded with `JSONDecoder` and `FastJSONDecoder`, with the fast decoder's
/// scan and stage one alone, in pairs: twitter under `convertFromSnakeCase`, the others with
/// the default keys.
func registerCorpusBenchmarks(_ names: [String]) {
    func register<T: Decodable & Sendable>(_ name: String, _: T.Type, snakeCase: Bool) {
        let json: Data
        do {
            json = try CorpusDocuments.load(name)
        } catch {
            preconditionFailure("cannot read \(name) from \(CorpusDocuments.directory.path): \(error)")
        }
        let foundation = JSONDecoder()
        if snakeCase { foundation.keyDecodingStrategy = .convertFromSnakeCase }
        let fast = FastJSONDecoder(keyDecodingStrategy: snakeCase ? .convertFromSnakeCase : .useDefaultKeys)
        Paired(names: names) { variant in
            switch variant {
            case 0: blackHole(try foundation.decode(T.self, from: json))
            case 1: blackHole(try fast.decode(T.self, from: json))
            case 2: blackHole(try FastJSONDecoder.scan(json))
            default: blackHole(FastJSONDecoder.stageOne(json))
            }
        }.register("decode \(name) paired", maxDuration: .seconds(6))
    }
    register("twitter.json", Twitter.self, snakeCase: true)
    register("citm_catalog.json", CITMCatalog.self, snakeCase: false)
    register("canada.json", Canada.self, snakeCase: false)
}
