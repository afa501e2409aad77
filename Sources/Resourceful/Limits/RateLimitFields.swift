import Foundation
import HTTPTypes

/// What a response says of its upstream's limits: a budget it takes (`RateLimit-Policy`) and a
/// time it takes nothing (`Retry-After` on a `429` or `503`, or a limit it says is spent in
/// `RateLimit`, `RateLimit-Remaining`/`-Reset`, GitHub's `x-ratelimit-remaining`/`-reset` or
/// OpenAI's `x-ratelimit-remaining-requests`/`-reset-requests` and `-tokens`).
///
/// Fields are read as the upstream wrote them and never trusted further: a value that is not a
/// number, negative, absurdly large, or a field longer than ``maximumFieldLength`` is ignored,
/// and a pause is capped by the caller.
struct RateLimitFields: Equatable {
    /// The budget the upstream says it takes: the tightest of its policies.
    var budget: RateBudget?
    /// The window of that policy, for how long it holds.
    var window: Duration?
    /// How long the upstream takes nothing from now, as it says (before any cap).
    var pause: Duration?
    /// The field that said so, for the log line.
    var pauseSource: String?

    /// The longest field read; a longer one is ignored.
    static let maximumFieldLength = 4096
    /// The most list members of a field read; those after are ignored.
    static let maximumMembers = 64

    /// What `fields` of a response with `status` say, as of the wall-clock time `now` (GitHub's
    /// reset is a Unix time).
    init(status: HTTPResponse.Status, fields: HTTPFields, now: Date = Date()) {
        // A field of one value sent twice is read by its first line; a list field by all its lines.
        func value(_ name: String, list: Bool = false) -> String? {
            guard let name = HTTPField.Name(name), let value = list ? fields[name] : fields[values: name].first,
                value.utf8.count <= Self.maximumFieldLength
            else { return nil }
            return value
        }
        func consider(_ duration: Duration?, from source: String) {
            guard let duration, duration > .zero else { return }
            if let pause, pause >= duration { return }
            pause = duration
            pauseSource = source
        }
        if status.code == 429 || status.code == 503 {
            consider(RetryAfter.delay(value("Retry-After"), now: now), from: "Retry-After")
        }
        if let policy = value("RateLimit-Policy", list: true), let tightest = Self.tightestPolicy(policy) {
            (budget, window) = (tightest.budget, tightest.window)
        }
        if let limit = value("RateLimit", list: true) {
            consider(Self.spentWindow(limit), from: "RateLimit")
        }
        // A reset is a number of seconds, or (GitHub, and some gateways for the older fields) a
        // Unix time.
        func reset(_ value: Int64) -> Duration? {
            let seconds = value > 1_000_000_000 ? Double(value) - now.timeIntervalSince1970 : Double(value)
            return seconds > 0 ? .milliseconds(Int64(Swift.min(seconds, 1e9) * 1000)) : nil
        }
        if Self.integer(value("RateLimit-Remaining")) == 0 {
            consider(Self.integer(value("RateLimit-Reset")).flatMap(reset), from: "RateLimit-Reset")
        }
        if Self.integer(value("X-RateLimit-Remaining")) == 0 {
            consider(Self.integer(value("X-RateLimit-Reset")).flatMap(reset), from: "X-RateLimit-Reset")
        }
        for kind in ["requests", "tokens"] where Self.integer(value("X-RateLimit-Remaining-\(kind)")) == 0 {
            consider(value("X-RateLimit-Reset-\(kind)").flatMap(Self.goDuration), from: "X-RateLimit-Reset-\(kind)")
        }
    }

    /// The tightest of the policies of a `RateLimit-Policy` list (`"default";q=100;w=60`): a
    /// quota `q` per window of `w` seconds is `q/w` per second with a burst of `q`.
    /// A policy in a quota unit other than requests (`qu="content-bytes"`, `"concurrent-requests"`)
    /// says nothing of a request rate and is passed over.
    static func tightestPolicy(_ field: String) -> (budget: RateBudget, window: Duration)? {
        var tightest: (budget: RateBudget, window: Duration)?
        for member in members(field) {
            let parameters = self.parameters(member)
            if let unit = parameters["qu"], unit.trimmingCharacters(in: CharacterSet(charactersIn: "\" ")) != "requests" { continue }
            guard let quota = parameters["q"].flatMap(integer), quota > 0,
                let window = parameters["w"].flatMap(integer), window > 0,
                let budget = RateBudget(requestsPerSecond: Double(quota) / Double(window), burst: Int(Swift.min(quota, Int64(RateBudget.maximumBurst))))
            else { continue }
            if tightest.map({ budget.isTighter(than: $0.budget) }) ?? true { tightest = (budget, .seconds(window)) }
        }
        return tightest
    }

    /// The longest wait of the members of a `RateLimit` list with nothing remaining
    /// (`"default";r=0;t=30`).
    static func spentWindow(_ field: String) -> Duration? {
        var longest: Int64?
        for member in members(field) {
            let parameters = self.parameters(member)
            guard parameters["r"].flatMap(integer) == 0, let reset = parameters["t"].flatMap(integer) else { continue }
            longest = Swift.max(longest ?? 0, reset)
        }
        return longest.map { .seconds($0) }
    }

    /// The members of a structured-field list, at most ``maximumMembers``.
    private static func members(_ field: String) -> [Substring] {
        Array(field.split(separator: ",", maxSplits: maximumMembers, omittingEmptySubsequences: true).prefix(maximumMembers))
    }

    /// The parameters of a list member (`"name";q=100;w=60`), by name.
    private static func parameters(_ member: Substring) -> [Substring: Substring] {
        var result: [Substring: Substring] = [:]
        for parameter in member.split(separator: ";").dropFirst().prefix(16) {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            let name = pair[0].trimmingPrefix(while: { $0 == " " })
            if result[name] == nil { result[name] = pair[1] }
        }
        return result
    }

    /// A whole number of at most 12 digits, with spaces around it; anything else is `nil`.
    static func integer<S: StringProtocol>(_ text: S?) -> Int64? {
        guard let text else { return nil }
        let digits = text.trimmingCharacters(in: .whitespaces)
        guard !digits.isEmpty, digits.utf8.count <= 12, digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int64(digits)
    }

    /// A duration as Go writes it (`6m0s`, `1.5s`, `20ms`, `1h2m`), at most a day; anything else
    /// is `nil`.
    static func goDuration(_ text: String) -> Duration? {
        var total = 0.0
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        guard !rest.isEmpty, rest.utf8.count <= 32 else { return nil }
        while !rest.isEmpty {
            let number = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
            guard !number.isEmpty, let value = Double(number) else { return nil }
            rest = rest.dropFirst(number.count)
            let unit = rest.prefix { $0.isASCII && $0.isLetter }
            rest = rest.dropFirst(unit.count)
            switch unit {
            case "h": total += value * 3600
            case "m": total += value * 60
            case "s": total += value
            case "ms": total += value / 1000
            default: return nil
            }
        }
        guard total.isFinite, total >= 0, total <= 86_400 else { return nil }
        return .milliseconds(Int64((total * 1000).rounded(.up)))
    }
}
