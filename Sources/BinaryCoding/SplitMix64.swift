/// SplitMix64 (Steele, Lea and Flood): a small seeded generator, so that the same seed always
/// writes the same export or replays the same random test, and its finaliser, which spreads a
/// hash's bits (the study load's Bloom filter). Stable across processes and machines.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= Self.increment
        return Self.mix(state)
    }

    /// A number in 0..<bound.
    public mutating func next(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// The generator's step between states (the golden ratio's bits).
    @inlinable public static var increment: UInt64 { 0x9E37_79B9_7F4A_7C15 }

    /// The finaliser: every bit of `x` reaches every bit of the result.
    @inlinable public static func mix(_ x: UInt64) -> UInt64 {
        var z = x
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
