import Foundation
import ProcessTestSupport
import ResourcefulJSON
import ResourcefulTesting
import Testing

/// The standard corpus (`twitter.json`, `citm_catalog.json`, `canada.json`, read from
/// `Tests/Fixtures/json/`) decoded into its models with `JSONDecoder` and `FastJSONDecoder`:
/// the same values; after random damage, the same errors; and stage one's reading of each
/// document is the byte-by-byte scanner's.
@Suite struct CorpusTests {
    static let twitter = DecoderComparison(keys: .convertFromSnakeCase)
    static let plain = DecoderComparison()

    @Test func twitterDecodesAlike() async throws {
        let json = try CorpusDocuments.load("twitter.json")
        // Seconds of decoding in a debug build: kept off the cooperative pool.
        let (foundation, fast) = try await onOwnThread { Self.twitter.outcomes(Twitter.self, json) }
        #expect(foundation == fast)
        guard case .value(let twitter) = fast else { Issue.record("FastJSONDecoder failed: \(fast)"); return }
        #expect(twitter.statuses.count == 100)
        #expect(twitter.statuses.contains { $0.retweetedStatus != nil } && twitter.statuses.contains { $0.entities.media != nil })
        #expect(twitter.statuses.contains { $0.text.unicodeScalars.contains { $0.value > 0x3000 } })
        #expect(twitter.searchMetadata.maxId == 505_874_924_095_815_700)
    }

    @Test func citmCatalogDecodesAlike() async throws {
        let json = try CorpusDocuments.load("citm_catalog.json")
        let (foundation, fast) = try await onOwnThread { Self.plain.outcomes(CITMCatalog.self, json) }
        #expect(foundation == fast)
        guard case .value(let catalog) = fast else { Issue.record("FastJSONDecoder failed: \(fast)"); return }
        #expect(catalog.events.count == 184 && catalog.performances.count == 243)
        #expect(catalog.areaNames["205705993"] == "Arrière-scène central")
    }

    @Test func canadaDecodesAlike() async throws {
        let json = try CorpusDocuments.load("canada.json")
        let (foundation, fast) = try await onOwnThread { Self.plain.outcomes(Canada.self, json) }
        #expect(foundation == fast)
        guard case .value(let canada) = fast else { Issue.record("FastJSONDecoder failed: \(fast)"); return }
        #expect(canada.features.first?.geometry.coordinates.first?.first == [-65.613616999999977, 43.420273000000009])
        #expect(canada.features.reduce(0) { $0 + $1.geometry.coordinates.reduce(0) { $0 + $1.count } } == 55_563)
    }

    @Test(arguments: ["twitter.json", "citm_catalog.json", "canada.json"])
    func stageOneReadsTheCorpusAsTheScalarScannerDoes(name: String) async throws {
        let bytes = [UInt8](try CorpusDocuments.load(name))
        let difference = try await onOwnThread { JSONScanAgreement.difference(bytes) }
        #expect(difference == nil)
        #expect(JSONScanAgreement.isValidUTF8(bytes) == true)
        #expect(JSONScanAgreement.usesIndex(bytes) == true)
    }

    /// Pieces of twitter.json (a status each, with its escapes and Japanese text), damaged at
    /// random: both decoders fail alike, or agree.
    @Test(arguments: [51, 52])
    func damagedStatusesFailAlike(seed: UInt64) async throws {
        let json = try CorpusDocuments.load("twitter.json")
        let failures = try await onOwnThread { try Self.damagedStatusFailures(json, seed: seed) }
        #expect(failures.isEmpty, "\(failures.prefix(3))")
    }

    private static func damagedStatusFailures(_ json: Data, seed: UInt64) throws -> [String] {
        guard let object = try JSONSerialization.jsonObject(with: json) as? [String: Any],
              let statuses = object["statuses"] as? [Any]
        else { return ["twitter.json has no statuses"] }
        var random = SeededRandomNumberGenerator(seed: seed)
        var failures: [String] = []
        for round in 0..<60 * FastJSONDecoderFuzzTests.scale {
            let status = statuses[(round * 7 + Int(seed)) % statuses.count]
            var document = [UInt8](try JSONSerialization.data(withJSONObject: status))
            for _ in 0...Int(random.next() % 2) { JSONGenerator.mutate(&document, &random) }
            let (foundation, fast) = twitter.outcomes(TwitterStatus.self, Data(document))
            if !DecoderComparison.agree(foundation, fast) {
                failures.append("round \(round): JSONDecoder gave \(foundation), FastJSONDecoder gave \(fast)")
            }
        }
        return failures
    }
}
