import Foundation

/// The seed of a randomized test: `HEALTHVAULT_TEST_SEED` when set (to replay a failure), else a
/// fresh one. Tests put it in their failure messages (`"\(seed)"` says how to replay).
public struct TestSeed: CustomStringConvertible, Sendable {
    public let value: UInt64

    public init() {
        if let text = ProcessInfo.processInfo.environment["HEALTHVAULT_TEST_SEED"], let chosen = UInt64(text) {
            value = chosen
        } else {
            value = UInt64.random(in: 1...UInt64.max)
        }
    }

    /// A generator that gives the same numbers for the same seed.
    public var generator: SeededRandom { SeededRandom(seed: value) }

    public var description: String { "seed \(value) (HEALTHVAULT_TEST_SEED=\(value) replays it)" }
}
