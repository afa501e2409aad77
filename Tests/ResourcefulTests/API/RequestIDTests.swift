@testable import Resourceful
import Testing

@Suite struct RequestIDTests {
    @Test func idsAreSixteenLowercaseHexDigits() {
        for _ in 0..<1_000 {
            let id = API.makeRequestID()
            #expect(id.utf8.count == 16)
            #expect(id.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) })
        }
    }

    @Test func idsDoNotRepeatAcrossConcurrentCalls() async {
        let ids = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<8 {
                group.addTask { (0..<5_000).map { _ in API.makeRequestID() } }
            }
            return await group.reduce(into: [String]()) { $0 += $1 }
        }
        #expect(ids.count == 40_000)
        #expect(Set(ids).count == ids.count)
    }

    @Test func idsSpreadOverEveryDigit() {
        // Consecutive counters must not give IDs that share a prefix: each position takes many values.
        let ids = (0..<256).map { _ in Array(API.makeRequestID().utf8) }
        for position in 0..<16 {
            #expect(Set(ids.map { $0[position] }).count >= 12, "position \(position)")
        }
    }
}
