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

    init(expected: Int = 0) {
        var capacity = 1024
        while capacity * 7 / 10 < expected { capacity <<= 1 }
        slots = [UInt64](repeating: 0, count: capacity)
        mask = capacity - 1
        seed = UInt64.random(in: 1...UInt64.max)
    }

    /// Adds the identity of `prefix`; false when it was already there.
    mutating func insert(_ prefix: UnsafeRawBufferPointer) -> Bool {
        var h = hash(prefix)
        if h == 0 { h = 1 }  // 0 marks an empty slot
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

    /// A 64-bit multiply-xorshift hash over 8-byte words (wyhash-style mixing), seeded.
    private func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
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
