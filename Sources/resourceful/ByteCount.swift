import ArgumentParser
import Foundation

/// A number of bytes as curl's `--max-filesize` takes it: `5000000`, or with a suffix of 1024's
/// powers, `100k`, `20M`, `5G`, `1T` (either case; a fraction such as `1.5G` is taken whole).
struct ByteCount: ExpressibleByArgument, Equatable {
    /// The bytes.
    var bytes: Int

    init(bytes: Int) {
        self.bytes = bytes
    }

    init?(argument: String) {
        let text = argument.trimmingCharacters(in: .whitespaces)
        let multipliers: [Character: Double] = ["k": 1024, "m": 1_048_576, "g": 1_073_741_824, "t": 1_099_511_627_776]
        var number = Substring(text)
        var multiplier = 1.0
        if let last = text.last?.lowercased().first, let found = multipliers[last] {
            multiplier = found
            number = number.dropLast()
        }
        // Digits, with at most one point between them: no sign, exponent, `nan` or `inf`.
        guard !number.isEmpty, number.first != ".", number.last != ".", number.filter({ $0 == "." }).count <= 1,
            number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), let value = Double(number)
        else { return nil }
        let total = (value * multiplier).rounded(.down)
        guard total < Double(Int.max) else { return nil }
        bytes = Int(total)
    }
}
