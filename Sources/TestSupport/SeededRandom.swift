import BinaryCoding

/// A small deterministic generator, so that a failing random test reproduces from its seed:
/// BinaryCoding's SplitMix64, the one the generated exports use.
public typealias SeededRandom = SplitMix64
