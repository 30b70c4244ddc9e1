import Formats

/// A small, fast, seeded generator (SplitMix64): the same seed always yields the same corpus.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A lower-case UUID (version 4 layout).
    public mutating func uuid() -> String {
        CanonicalUUID.random(using: &self)
    }

    /// `count` random bytes as lower-case hex.
    public mutating func hex(bytes count: Int) -> String {
        Hex.encode((0..<count).map { _ in UInt8.random(in: 0...255, using: &self) })
    }

    public mutating func pick<T>(_ choices: [T]) -> T {
        choices[Int.random(in: 0..<choices.count, using: &self)]
    }
}
