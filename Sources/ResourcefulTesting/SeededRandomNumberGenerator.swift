/// A random number generator that gives the same numbers for the same seed (SplitMix64), so that a
/// randomized test or benchmark that fails can be run again exactly.
///
/// ```swift
/// var random = SeededRandomNumberGenerator(seed: 42)
/// let order = [0, 1, 2].shuffled(using: &random)
/// ```
///
/// Not for secrets: its numbers are easy to predict from one another.
public struct SeededRandomNumberGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator whose numbers are fixed by `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
