/// The line hashes a bundle has shown so far, in bounded memory whatever the bundle's size: a
/// Bloom filter of 8 MiB with three probes. A participant's first bundle copies a raw line
/// straight into `samples` as the first of its kind only when the filter says its hash is new;
/// a line it may have seen (a true copy, or about 1 % false alarms at five million lines) goes
/// through staging, where the database numbers identical lines exactly.
struct LineBloomFilter {
    private static let wordCount = 1 << 20
    private var words = [UInt64](repeating: 0, count: LineBloomFilter.wordCount)
    private var dirty = false

    /// Forgets every hash.
    mutating func reset() {
        guard dirty else { return }
        for i in words.indices { words[i] = 0 }
        dirty = false
    }

    /// Adds `hash`; true when it may have been added before.
    mutating func insert(_ hash: UInt64) -> Bool {
        dirty = true
        // The SplitMix64 finaliser spreads FNV's bits; two halves make the three probes.
        var z = hash &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        let bits = UInt64(Self.wordCount * 64)
        let a = z & 0xFFFF_FFFF, b = (z >> 32) | 1
        var seen = true
        for i in 0..<UInt64(3) {
            let bit = (a &+ i &* b) % bits
            let word = Int(bit >> 6), mask = UInt64(1) << (bit & 63)
            if words[word] & mask == 0 {
                seen = false
                words[word] |= mask
            }
        }
        return seen
    }
}
