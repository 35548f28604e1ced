/// The identities of the data events in a vault: 64-bit hashes in an open-addressing table
/// (linear probing, at most 70% full), 8 bytes a slot. A `Set<Int>` cost twice the memory and
/// hashed every identity twice (docs/benchmarks.md).
///
/// The hash is keyed with a random seed per table, so two vaults' identities are unrelated and
/// inputs cannot be crafted to collide; two different events share a hash with probability
/// about n²/2⁶⁵ (10⁻⁶ at six million events).
struct IdentitySet {
    private var slots: [UInt64]
    private var mask: Int
    private(set) var count = 0
    private let seed: UInt64

    init(expected: Int = 0, maximumSlots: Int = .max) {
        var capacity = 1024
        while capacity * 7 / 10 < expected && capacity < maximumSlots { capacity <<= 1 }
        slots = [UInt64](repeating: 0, count: capacity)
        mask = capacity - 1
        seed = UInt64.random(in: 1...UInt64.max)
    }

    /// Adds the identity of `prefix`; false when it was already there.
    mutating func insert(_ prefix: UnsafeRawBufferPointer) -> Bool {
        insert(hash: hash(prefix))
    }

    /// Adds an identity hash (from `hash(_:)`); false when it was already there.
    mutating func insert(hash value: UInt64) -> Bool {
        let h = value == 0 ? 1 : value  // 0 marks an empty slot
        if (count + 1) * 10 > slots.count * 7 { grow() }
        var i = Int(truncatingIfNeeded: h) & mask
        while true {
            let slot = slots[i]
            if slot == 0 {
                slots[i] = h
                count += 1
                return true
            }
            if slot == h { return false }
            i = (i + 1) & mask
        }
    }

    private mutating func grow() {
        let old = slots
        slots = [UInt64](repeating: 0, count: old.count * 2)
        mask = slots.count - 1
        for h in old where h != 0 {
            var i = Int(truncatingIfNeeded: h) & mask
            while slots[i] != 0 { i = (i + 1) & mask }
            slots[i] = h
        }
    }

    /// Every identity in the table, sorted: where the external deduplication starts from.
    func sortedHashes() -> [UInt64] {
        var all = [UInt64]()
        all.reserveCapacity(count)
        for h in slots where h != 0 { all.append(h) }
        all.sort()
        return all
    }

    /// Slots the table has now (8 bytes each).
    var capacity: Int { slots.count }

    /// Whether one more insert would grow the table past `slots` slots.
    func wouldGrow(beyond slotLimit: Int) -> Bool {
        (count + 1) * 10 > slots.count * 7 && slots.count >= slotLimit
    }

    /// Frees the table, keeping the seed so that `hash(_:)` stays the same.
    mutating func releaseStorage() {
        slots = [UInt64](repeating: 0, count: 1)
        mask = 0
        count = 0
    }

    /// A 64-bit multiply-xorshift hash over 8-byte words (wyhash-style mixing), seeded.
    /// Never 0 (that marks an empty slot), so hashes compare the same inside and outside the table.
    func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let h = rawHash(bytes)
        return h == 0 ? 1 : h
    }

    private func rawHash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var h = seed ^ (UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15)
        var i = 0
        while i + 8 <= bytes.count {
            h = mix(h ^ bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            i += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while i < bytes.count {
            tail |= UInt64(bytes[i]) << shift
            shift += 8
            i += 1
        }
        return mix(mix(h ^ tail) ^ 0xA076_1D64_78BD_642F)
    }

    @inline(__always)
    private func mix(_ x: UInt64) -> UInt64 {
        let product = x.multipliedFullWidth(by: 0xE703_7ED1_A0B4_28DB)
        return product.high ^ product.low
    }
}
