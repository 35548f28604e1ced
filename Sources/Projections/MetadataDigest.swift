import BinaryCoding
import HealthModel

/// A 32-bit digest of a record's metadata, the same whatever order the entries come in: what the
/// read models compare to tell an app's rewritten copy of a sample (every field equal but its
/// creation date) from a distinct sample with equal value and time (two foods of equal energy
/// differ in `HKFoodType`). 0 means no metadata.
///
/// Each entry is hashed on its own (`FNV1a` over the key's UTF-8, a 0xFF separator and the
/// value's) and the hashes are added, so the digest is order-independent; the sum is folded to
/// 32 bits. Stored in the read models (docs/projections.md), so it never changes: a change needs
/// a new read-model format.
public enum MetadataDigest {
    public static func of(_ entries: [MetadataEntry]) -> UInt32 {
        guard !entries.isEmpty else { return 0 }
        var sum: UInt64 = 0
        for entry in entries {
            var hash = FNV1a()
            hash.add(entry.key.utf8)
            hash.add(CollectionOfOne(0xFF))
            hash.add(entry.value.utf8)
            sum &+= hash.value
        }
        let folded = UInt32(truncatingIfNeeded: sum ^ (sum >> 32))
        return folded == 0 ? 1 : folded
    }
}
