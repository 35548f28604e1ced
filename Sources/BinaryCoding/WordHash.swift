/// A fast seeded 64-bit hash of bytes: a multiply-xorshift over 8-byte words (wyhash-style
/// mixing). Not cryptographic; seeded per table with a random value, inputs cannot be crafted to
/// collide. The import's identity table and string pool use it.
public enum WordHash {
    @inlinable
    public static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
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

    @inlinable @inline(__always)
    static func mix(_ x: UInt64) -> UInt64 {
        let product = x.multipliedFullWidth(by: 0xE703_7ED1_A0B4_28DB)
        return product.high ^ product.low
    }
}
