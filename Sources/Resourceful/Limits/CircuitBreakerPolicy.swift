import Foundation

/// When a circuit breaker opens and how it closes again (`limits.breaker.*` keys).
///
/// The breaker of an upstream counts the outcomes of the calls of the last ``window`` (or of the
/// last ``windowCalls`` calls, a count-based window); once at least ``minimumCalls`` ended there
/// and ``failureRatio`` of them failed — or ``slowCallRatio`` of them were slower than
/// ``slowCallDuration``, when set — it opens: calls fail at once for ``openInterval``. Then up to
/// ``probes`` calls go through; when all succeed it closes, when one fails it opens again. A
/// failure is a connection failure, a time-out, or a status in ``failureStatuses`` (server
/// errors); a `4xx` answer never is. A slow answer that is also a failure counts as a failure.
public struct CircuitBreakerPolicy: Sendable, Equatable {
    /// The share of failed calls that opens the breaker, over 0 and at most 1 (0.5 by default).
    public var failureRatio: Double
    /// How many calls must have ended within ``window`` before the ratio counts (10 by default).
    public var minimumCalls: Int
    /// How far back the outcomes are counted (30 seconds by default).
    public var window: Duration
    /// How long the breaker stays open before it lets probes through (10 seconds by default).
    public var openInterval: Duration
    /// How many calls probe a half-open breaker at once, all of which must succeed to close it
    /// (1 by default).
    public var probes: Int
    /// The statuses that count as failures (500, 502, 503 and 504 by default).
    public var failureStatuses: Set<Int>
    /// When set, the outcomes of the last this many calls are counted, whenever they ended, in
    /// place of those of the last ``window`` (at most ``maximumWindowCalls``; `nil` by default).
    public var windowCalls: Int?
    /// When set, an answer that took longer counts as slow (`nil` by default: none is).
    public var slowCallDuration: Duration?
    /// The share of slow calls that opens the breaker, over 0 and at most 1 (1 by default: every
    /// call counted was slow); counted only when ``slowCallDuration`` is set.
    public var slowCallRatio: Double

    /// The largest count-based window: a breaker holds a byte per call of its window.
    public static let maximumWindowCalls = 1_000

    /// Creates a policy.
    public init(
        failureRatio: Double = 0.5,
        minimumCalls: Int = 10,
        window: Duration = .seconds(30),
        openInterval: Duration = .seconds(10),
        probes: Int = 1,
        failureStatuses: Set<Int> = [500, 502, 503, 504],
        windowCalls: Int? = nil,
        slowCallDuration: Duration? = nil,
        slowCallRatio: Double = 1
    ) {
        self.failureRatio = failureRatio
        self.minimumCalls = minimumCalls
        self.window = window
        self.openInterval = openInterval
        self.probes = probes
        self.failureStatuses = failureStatuses
        self.windowCalls = windowCalls.map { Swift.min(Swift.max($0, 1), Self.maximumWindowCalls) }
        self.slowCallDuration = slowCallDuration
        self.slowCallRatio = slowCallRatio
    }

    /// Whether `failures` or `slow` of `calls` counted open the breaker.
    package func opens(calls: Int, failures: Int, slow: Int) -> Bool {
        guard calls >= minimumCalls else { return false }
        if Double(failures) >= failureRatio * Double(calls) { return true }
        return slowCallDuration != nil && Double(slow) >= slowCallRatio * Double(calls)
    }
}

extension CircuitBreakerPolicy {
    /// The policy under `keys` (`limits.breaker`), or `nil` when none of its keys is set: the
    /// breaker is off unless configured.
    ///
    /// - Throws: ``APIError/Kind/invalidConfiguration`` naming the key at fault.
    init?(keys: ConfigurationKeys) throws(APIError) {
        let ratio = try keys.number("failureRatio", in: 0.01...1, unit: "(the share of failed calls)")
        let minimum = try keys.int("minimumCalls", in: 1...1_000_000, unit: "calls")
        let window = try keys.seconds("window", allowZero: false)
        let open = try keys.seconds("openInterval", allowZero: false)
        let probes = try keys.int("probes", in: 1...1000, unit: "calls")
        let statuses = try keys.stringArray("failureStatuses")
        let windowCalls = try keys.int("windowCalls", in: 1...Self.maximumWindowCalls, unit: "calls")
        let slowDuration = try keys.seconds("slowCallDuration", allowZero: false)
        let slowRatio = try keys.number("slowCallRatio", in: 0.01...1, unit: "(the share of slow calls)")
        let set: [Any?] = [ratio, minimum, window, open, probes, statuses, windowCalls, slowDuration, slowRatio]
        guard set.contains(where: { $0 != nil }) else { return nil }
        if slowRatio != nil, slowDuration == nil {
            throw keys.invalid("slowCallDuration", expected: "a duration in seconds: slowCallRatio counts calls slower than it")
        }
        self.init()
        failureRatio = ratio ?? failureRatio
        minimumCalls = minimum ?? minimumCalls
        self.window = window ?? self.window
        openInterval = open ?? openInterval
        self.probes = probes ?? self.probes
        self.windowCalls = windowCalls
        slowCallDuration = slowDuration
        slowCallRatio = slowRatio ?? slowCallRatio
        if let statuses {
            let codes = statuses.compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }.filter { (500...599).contains($0) }
            guard codes.count == statuses.count else {
                throw keys.invalid("failureStatuses", expected: "server error statuses (500 to 599): a 4xx answer says the request was wrong, not that the upstream is failing")
            }
            failureStatuses = Set(codes)
        }
    }
}
