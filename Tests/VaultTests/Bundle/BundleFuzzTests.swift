import Foundation
@testable import HealthModel
@testable import ResearchBundle
import Testing
@testable import Vault
import VaultTestSupport

/// The bundle reader fed mutated bundles: never a crash, never output for a changed bundle,
/// always one error line. Seeded, so that a failure reproduces; the corpus is a real bundle.
@Suite struct BundleFuzzTests {
    @Test func mutatedBundlesAreRefusedWithoutCrashOrOutput() throws {
        // One day of raw lines: a bundle of one chunk, as four days' is (chunks hold 1 MiB), so the
        // mutations meet the same structure, and each attempt decrypts a quarter of the bytes.
        let made = try BundleTamperTests.Made(days: 1)
        #expect(made.bytes.count < BundleFormat.chunkSize)
        var rng = SeededRandom(seed: UInt64(ProcessInfo.processInfo.environment["HEALTHVAULT_FUZZ_SEED"] ?? "") ?? 424_242)
        let rounds = Int(ProcessInfo.processInfo.environment["HEALTHVAULT_FUZZ_ROUNDS"] ?? "") ?? 300
        var refused = 0
        for round in 0..<rounds {
            var bytes = made.bytes
            for _ in 0..<(1 + rng.next(4)) {
                switch rng.next(6) {
                case 0: bytes[rng.next(bytes.count)] = UInt8(rng.next(256))          // overwrite a byte
                case 1: bytes.removeSubrange(rng.next(bytes.count)..<bytes.count)    // truncate
                case 2: bytes.insert(UInt8(rng.next(256)), at: rng.next(bytes.count)) // insert
                case 3:                                                              // a chunk length lies
                    let at = BundleFormat.headerBytes
                    if bytes.count > at + 4 { for k in 0..<4 { bytes[at + k] = UInt8(rng.next(256)) } }
                case 4: bytes += (0..<rng.next(64)).map { _ in UInt8(rng.next(256)) } // trailing junk
                default:                                                             // swap two ranges
                    let a = rng.next(bytes.count), b = rng.next(bytes.count)
                    bytes.swapAt(a, b)
                }
                if bytes.isEmpty { bytes = [0] }
            }
            guard bytes != made.bytes else { continue }
            #expect(made.attempt(bytes) != nil, "round \(round): a mutated bundle was accepted")
            refused += 1
        }
        #expect(refused > rounds / 2)
    }
}
