import Foundation
import HTTPTypes
@testable import Resourceful
import Testing

/// What a response's fields say of its upstream's limits, in every form upstreams write them,
/// and nothing from values that are not what they claim.
@Suite struct RateLimitFieldsTests {
    static func fields(_ pairs: [(String, String)]) -> HTTPFields {
        var fields = HTTPFields()
        for (name, value) in pairs { fields.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        return fields
    }

    static func read(_ pairs: [(String, String)], status: HTTPResponse.Status = .ok, now: Date = Date()) -> RateLimitFields {
        RateLimitFields(status: status, fields: fields(pairs), now: now)
    }

    @Test func theTightestPolicyGoverns() {
        let said = Self.read([("RateLimit-Policy", #""burst";q=100;w=60, "daily";q=1000;w=86400, "minute";q=20;w=1"#)])
        #expect(said.budget == RateBudget(requestsPerSecond: 1000.0 / 86400, burst: 1000))
        #expect(said.pause == nil)
        #expect(Self.read([("RateLimit-Policy", #""default";q=100;w=60"#)]).budget == RateBudget(requestsPerSecond: 100.0 / 60, burst: 100))
    }

    @Test func aPolicyInAnotherUnitIsPassedOverAndAPolicySaysItsWindow() {
        let said = Self.read([("RateLimit-Policy", #""bytes";q=1;w=1;qu="content-bytes", "calls";q=50;w=10"#)])
        #expect(said.budget == RateBudget(requestsPerSecond: 5, burst: 50))
        #expect(said.window == .seconds(10))
        #expect(Self.read([("RateLimit-Policy", #""c";q=1;w=1;qu="concurrent-requests""#)]).budget == nil)
        #expect(Self.read([("RateLimit-Policy", #""r";q=3;w=1;qu="requests""#)]).budget == RateBudget(requestsPerSecond: 3, burst: 3))
    }

    @Test func aFieldOfOneValueSentTwiceIsReadByItsFirst() {
        #expect(Self.read([("Retry-After", "2"), ("Retry-After", "2")], status: .tooManyRequests).pause == .seconds(2))
        #expect(Self.read([("RateLimit-Remaining", "0"), ("RateLimit-Remaining", "0"), ("RateLimit-Reset", "3")]).pause == .seconds(3))
        // A list field's lines are one list.
        #expect(Self.read([("RateLimit-Policy", #""a";q=100;w=1"#), ("RateLimit-Policy", #""b";q=1;w=1"#)]).budget == RateBudget(requestsPerSecond: 1, burst: 1))
    }

    @Test func anOlderResetSentAsAUnixTimeIsReadAsOne() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(Self.read([("RateLimit-Remaining", "0"), ("RateLimit-Reset", "1800000007")], now: now).pause == .seconds(7))
        #expect(Self.read([("RateLimit-Remaining", "0"), ("RateLimit-Reset", "1700000000")], now: now).pause == nil)
    }

    @Test func aSpentLimitPausesUntilItsReset() {
        #expect(Self.read([("RateLimit", #""default";r=0;t=30"#)]).pause == .seconds(30))
        #expect(Self.read([("RateLimit", #""default";r=5;t=30"#)]).pause == nil)
        #expect(Self.read([("RateLimit-Limit", "100"), ("RateLimit-Remaining", "0"), ("RateLimit-Reset", "12")]).pause == .seconds(12))
        // GitHub: a Unix time.
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let github = Self.read([("x-ratelimit-limit", "5000"), ("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "1800000042")], now: now)
        #expect(github.pause == .seconds(42))
        #expect(github.pauseSource == "X-RateLimit-Reset")
        // OpenAI: durations as Go writes them, for requests and tokens.
        #expect(Self.read([("x-ratelimit-remaining-requests", "0"), ("x-ratelimit-reset-requests", "6m0s")]).pause == .seconds(360))
        #expect(Self.read([("x-ratelimit-remaining-tokens", "0"), ("x-ratelimit-reset-tokens", "1.5s")]).pause == .milliseconds(1500))
        #expect(Self.read([("x-ratelimit-remaining-requests", "3"), ("x-ratelimit-reset-requests", "20ms")]).pause == nil)
    }

    @Test func retryAfterPausesOnlyARefusal() {
        #expect(Self.read([("Retry-After", "2")], status: .tooManyRequests).pause == .seconds(2))
        #expect(Self.read([("Retry-After", "2")], status: .serviceUnavailable).pause == .seconds(2))
        #expect(Self.read([("Retry-After", "2")], status: .ok).pause == nil)
        // The longest of what the fields say.
        let both = Self.read([("Retry-After", "2"), ("RateLimit", #""a";r=0;t=9"#)], status: .tooManyRequests)
        #expect(both.pause == .seconds(9) && both.pauseSource == "RateLimit")
    }

    @Test(arguments: [
        ("RateLimit-Policy", #""a";q=-5;w=60"#), ("RateLimit-Policy", #""a";q=1e30;w=1"#), ("RateLimit-Policy", #""a";q=10;w=0"#),
        ("RateLimit-Policy", #""a";q=ten;w=1"#), ("RateLimit-Policy", #""a";q=10"#), ("RateLimit-Policy", ";;;,,,=="),
        ("RateLimit", #""a";r=0;t=-3"#), ("RateLimit", #""a";r=0;t=soon"#), ("RateLimit-Remaining", "0"),
        ("x-ratelimit-reset-requests", "6 minutes"), ("x-ratelimit-remaining", "-1"),
    ])
    func absurdValuesAreIgnored(name: String, value: String) {
        let said = Self.read([(name, value), ("x-ratelimit-reset", "10")])
        #expect(said.budget == nil)
        #expect(said.pause == nil, "\(name): \(value)")
    }

    @Test func hugeFieldsAndLongListsCostLittleAndAreBounded() {
        let many = (0..<10_000).map { #""p\#($0)";q=\#($0 + 1);w=1"# }.joined(separator: ", ")
        // Longer than any field read: ignored whole.
        #expect(Self.read([("RateLimit-Policy", many)]).budget == nil)
        // Within the length read, only the first members count.
        let some = (0..<200).map { #""p";q=\#(1000 - $0);w=1"# }.joined(separator: ",")
        #expect(some.utf8.count <= RateLimitFields.maximumFieldLength)
        let budget = Self.read([("RateLimit-Policy", some)]).budget
        #expect(budget?.burst == 1000 - (RateLimitFields.maximumMembers - 1))
        let mebibyte = String(repeating: "9", count: 1 << 20)
        #expect(Self.read([("Retry-After", mebibyte)], status: .tooManyRequests).pause == nil)
        #expect(Self.read([("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", mebibyte)]).pause == nil)
    }

    @Test func goDurations() {
        #expect(RateLimitFields.goDuration("1h2m3s") == .seconds(3723))
        #expect(RateLimitFields.goDuration("20ms") == .milliseconds(20))
        #expect(RateLimitFields.goDuration("0s") == .zero)
        for bad in ["", "s", "1x", "1.2.3s", "99999h", "-1s", String(repeating: "1s", count: 40)] {
            #expect(RateLimitFields.goDuration(bad) == nil, "\(bad)")
        }
    }
}
