/// FNV-1a, 64 bits: a stable hash of bytes, the same in every process and on every machine
/// (unlike `Hasher`), for values that are stored: the read models' metadata digests, a replaced
/// sample's content, the upsert rule's slots. Not for untrusted keys of a hash table (`WordHash`).
public struct FNV1a {
    @usableFromInline var state: UInt64 = 0xCBF2_9CE4_8422_2325

    @inlinable public init() {}

    /// The hash of what was added.
    @inlinable public var value: UInt64 { state }

    @inlinable public mutating func add<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        for byte in bytes { state = (state ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
    }

    /// Adds a word as its 8 bytes, least significant first.
    @inlinable public mutating func add(littleEndian word: UInt64) {
        withUnsafeBytes(of: word.littleEndian) { add($0) }
    }

    /// The hash of `bytes`.
    @inlinable public static func hash<Bytes: Sequence>(_ bytes: Bytes) -> UInt64 where Bytes.Element == UInt8 {
        var hash = FNV1a()
        hash.add(bytes)
        return hash.value
    }
}
