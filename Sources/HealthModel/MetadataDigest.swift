/// A 32-bit digest of a record's metadata, the same whatever order the entries come in: what the
/// read models compare to tell an app's rewritten copy of a sample (every field equal but its
/// creation date) from a distinct sample with equal value and time (two foods of equal energy
/// differ in `HKFoodType`). 0 means no metadata.
///
/// Each entry is hashed on its own (FNV-1a, 64-bit, over the key's and value's UTF-8 with a
/// separator) and the hashes are added, so the digest is order-independent; the sum is folded to
/// 32 bits. Stored in the read models (docs/projections.md), so it never changes: a change needs
/// a new read-model format.
public enum MetadataDigest {
    public static func of(_ entries: [MetadataEntry]) -> UInt32 {
        var digest = Accumulator()
        for entry in entries { digest.add(key: entry.key, value: entry.value) }
        return digest.value
    }

    /// Adds entries one at a time (a decoder reading them off an event).
    public struct Accumulator {
        private var sum: UInt64 = 0
        private var count = 0

        public init() {}

        public mutating func add(key: String, value: String) {
            var hash: UInt64 = 0xCBF2_9CE4_8422_2325
            for byte in key.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
            hash = (hash ^ 0xFF) &* 0x0000_0100_0000_01B3
            for byte in value.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
            sum &+= hash
            count += 1
        }

        /// The digest: 0 when no entry was added, never 0 otherwise.
        public var value: UInt32 {
            guard count > 0 else { return 0 }
            let folded = UInt32(truncatingIfNeeded: sum ^ (sum >> 32))
            return folded == 0 ? 1 : folded
        }
    }
}
