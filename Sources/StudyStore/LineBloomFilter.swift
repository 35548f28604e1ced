/// The line hashes a bundle has shown so far, in bounded memory whatever the bundle's size: a
/// blocked Bloom filter of 8 MiB (three bits within one 64-byte block, so one cache miss a
/// line). A participant's first bundle copies a raw line straight into `samples` as the first
/// of its kind only when the filter says its hash is new; a line it may have seen (a true copy,
/// or about 1 % false alarms at five million lines) goes through staging, where the database
/// numbers identical lines exactly.
final class LineBloomFilter {
    private static let wordCount = 1 << 20
    private static let blockCount = wordCount / 8
    private let words = UnsafeMutablePointer<UInt64>.allocate(capacity: LineBloomFilter.wordCount)
    private var dirty = true

    init() {
        reset()
    }

    deinit { words.deallocate() }

    /// Forgets every hash.
    func reset() {
        guard dirty else { return }
        words.initialize(repeating: 0, count: Self.wordCount)
        dirty = false
    }

    /// Adds `hash`; true when it may have been added before.
    func insert(_ hash: UInt64) -> Bool {
        dirty = true
        // The SplitMix64 finaliser spreads FNV's bits: the top ones pick the block, the bottom
        // 27 the three bits within it.
        var z = hash &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        let block = words + Int(z >> 40) % Self.blockCount * 8
        var seen = true
        for probe in 0..<3 {
            let bit = Int((z >> (9 * UInt64(probe))) & 511)
            let mask = UInt64(1) << UInt64(bit & 63)
            if block[bit >> 6] & mask == 0 {
                seen = false
                block[bit >> 6] |= mask
            }
        }
        return seen
    }
}
