import BinaryCoding

/// The line hashes a bundle has shown so far, in bounded memory whatever the bundle's size: a
/// blocked Bloom filter (eight bits within one 64-byte block, so one cache miss a line) of eight
/// bytes a line the bundle's manifest announces, between 64 KiB and 8 MiB. A participant's first
/// bundle copies a raw line straight into `samples` as the first of its kind only when the
/// filter says its hash is new; a line it may have seen (a true copy, or a false alarm) goes
/// through staging, where the database numbers identical lines exactly. A manifest that
/// understates its lines costs more false alarms, never a wrong row.
///
/// False alarms at the announced size: between about one in 3 million lines and one in 150
/// million (the size is a power of two; one in 50 million for a bundle of 80,000 lines, which
/// so stages nothing but its true copies and skips the staging round trips); 0.24 % at five
/// million lines in the largest filter. Sized to the bundle (1 MiB for 80,000 lines), a
/// typical filter stays in the processor's cache; one size of 8 MiB for every bundle missed it
/// on every line (docs/benchmarks-history.md).
final class LineBloomFilter {
    private static let maximumWords = 1 << 20
    private static let minimumWords = 1 << 13
    private let words = UnsafeMutablePointer<UInt64>.allocate(capacity: LineBloomFilter.maximumWords)
    /// Blocks in use (a power of two) less one. Words beyond them are always zero.
    private var blockMask = LineBloomFilter.maximumWords / 8 - 1

    init() {
        reset(expectedLines: 0)
    }

    deinit { words.deallocate() }

    /// Forgets every hash and sizes the filter for `expectedLines` lines.
    func reset(expectedLines: Int) {
        words.initialize(repeating: 0, count: (blockMask + 1) * 8)
        var wordCount = Self.minimumWords
        while wordCount < Self.maximumWords && wordCount < expectedLines { wordCount <<= 1 }
        blockMask = wordCount / 8 - 1
    }

    /// Adds `hash`; true when it may have been added before.
    func insert(_ hash: UInt64) -> Bool {
        // Two SplitMix64 finalisers spread FNV's bits: the first picks the block; each byte of
        // the second sets one bit (its low six bits) in one word of the block.
        let z = SplitMix64.mix(hash &+ SplitMix64.increment)
        let bits = SplitMix64.mix(z)
        let block = words + (Int(truncatingIfNeeded: z) & blockMask) * 8
        var seen = true
        for probe in 0..<8 {
            let bit = Int((bits >> (8 * UInt64(probe))) & 63) | (probe << 6)
            let mask = UInt64(1) << UInt64(bit & 63)
            if block[bit >> 6] & mask == 0 {
                seen = false
                block[bit >> 6] |= mask
            }
        }
        return seen
    }
}
