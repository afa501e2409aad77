extension Duration {
    /// The whole duration in nanoseconds, saturating at `Int64`'s bounds: the one conversion of a
    /// `Duration` to a number in the package.
    package var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflow2 ? (scaled < 0 ? .min : .max) : sum
    }

    /// The duration in milliseconds with three decimals, for log lines.
    var millisecondsText: String {
        let micros = nanoseconds / 1_000
        let whole = micros / 1_000, fraction = abs(micros % 1_000)
        let padded = String(fraction)
        return "\(whole).\(String(repeating: "0", count: 3 - padded.count))\(padded)"
    }
}
