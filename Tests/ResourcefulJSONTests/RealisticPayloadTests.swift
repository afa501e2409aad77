import Foundation
import ResourcefulJSON
import ResourcefulTesting
import Testing

/// The payloads the benchmarks decode (GitHub's issue list, Stripe's list of charges), decoded
/// with `JSONDecoder` and `FastJSONDecoder` under the strategies such APIs need: the same values,
/// and, after random damage to the bytes, the same errors.
@Suite struct RealisticPayloadTests {
    static let gitHub = DecoderComparison(dates: .iso8601)
    static let stripe = DecoderComparison(keys: .convertFromSnakeCase, dates: .iso8601)

    @Test func gitHubIssuesDecodeAlike() throws {
        let json = RealisticPayloads.gitHubIssues
        let (foundation, fast) = Self.gitHub.outcomes([GitHubIssue].self, json)
        #expect(foundation == fast)
        guard case .value(let issues) = fast else { Issue.record("FastJSONDecoder failed: \(fast)"); return }
        // The payload has what the model is meant to cover.
        #expect(issues.count == 30)
        #expect(issues.contains { $0.closedAt != nil } && issues.contains { $0.closedAt == nil })
        #expect(issues.contains { $0.milestone?.dueOn != nil } && issues.contains { $0.milestone == nil })
        #expect(issues.contains { $0.body?.contains("🚀") == true } && issues.contains { $0.body?.contains("—") == true })
        #expect(issues.allSatisfy { $0.id > Int64(Int32.max) })
    }

    @Test func stripeChargesDecodeAlike() throws {
        let json = RealisticPayloads.stripeCharges
        let (foundation, fast) = Self.stripe.outcomes(StripeList<StripeCharge>.self, json)
        #expect(foundation == fast)
        guard case .value(let list) = fast else { Issue.record("FastJSONDecoder failed: \(fast)"); return }
        #expect(list.data.count == 50 && list.hasMore)
        #expect(list.data.allSatisfy { $0.sequence > 1 << 53 })
        #expect(list.data.contains { $0.capturedAt == nil } && list.data.contains { !$0.metadata.isEmpty })
        // Offsets and fractional seconds: not every created date falls on a whole second.
        #expect(list.data.contains { $0.created.timeIntervalSinceReferenceDate.rounded() != $0.created.timeIntervalSinceReferenceDate })
    }

    @Test(arguments: [41, 42])
    func damagedGitHubIssuesFailAlike(seed: UInt64) async {
        await damage(RealisticPayloads.gitHubIssues(count: 2, seed: seed), seed: seed) { document in
            Self.gitHub.expectAgreement([GitHubIssue].self, document)
        }
    }

    @Test(arguments: [43, 44])
    func damagedStripeChargesFailAlike(seed: UInt64) async {
        await damage(RealisticPayloads.stripeCharges(count: 2, seed: seed), seed: seed) { document in
            // The metadata and checks dictionaries make Foundation's choice among several errors
            // depend on hash order.
            Self.stripe.expectAgreement(StripeList<StripeCharge>.self, document, unorderedErrors: true)
        }
    }

    private func damage(_ payload: Data, seed: UInt64, _ check: (Data) -> Void) async {
        var random = SeededRandomNumberGenerator(seed: seed)
        for round in 0..<300 * FastJSONDecoderFuzzTests.scale {
            if round % 25 == 0 { await Task.yield() }
            var document = Array(payload)
            for _ in 0...Int(random.next() % 2) { JSONGenerator.mutate(&document, &random) }
            check(Data(document))
        }
    }
}
