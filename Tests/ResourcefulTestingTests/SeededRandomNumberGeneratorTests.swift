import ResourcefulTesting
import Testing

@Suite struct SeededRandomNumberGeneratorTests {
    @Test func theSameSeedGivesTheSameNumbers() {
        var first = SeededRandomNumberGenerator(seed: 7)
        var second = SeededRandomNumberGenerator(seed: 7)
        let a = (0..<100).map { _ in first.next() }
        let b = (0..<100).map { _ in second.next() }
        #expect(a == b)
    }

    @Test func otherSeedsGiveOtherNumbers() {
        var first = SeededRandomNumberGenerator(seed: 7)
        var second = SeededRandomNumberGenerator(seed: 8)
        #expect((0..<100).map { _ in first.next() } != (0..<100).map { _ in second.next() })
    }

    @Test func knownValuesOfSplitMix64() {
        // The first outputs of SplitMix64 seeded with 0, as its reference implementation gives them.
        var random = SeededRandomNumberGenerator(seed: 0)
        #expect(random.next() == 0xE220_A839_7B1D_CDAF)
        #expect(random.next() == 0x6E78_9E6A_A1B9_65F4)
    }

    @Test func numbersSpreadOverTheirRange() {
        var random = SeededRandomNumberGenerator(seed: 1)
        let buckets = (0..<8_000).reduce(into: [Int](repeating: 0, count: 8)) { counts, _ in
            counts[Int.random(in: 0..<8, using: &random)] += 1
        }
        #expect(buckets.allSatisfy { (850...1150).contains($0) }, "\(buckets)")
    }
}
