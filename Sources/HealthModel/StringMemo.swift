/// Values worked out from one string or a pair of strings, remembered by the strings' identity.
///
/// An import's parser hands out each type, unit and source name from one pool, so a type's
/// thousands of samples carry the same string storage: its two words find the value without
/// hashing or comparing its bytes. `String ==` only shortcuts equal words too; when the type
/// changes (most records of an export: step count, distance, energy, heart rate interleave) it
/// compares the bytes, and a dictionary lookup hashes them (measured: 7 % of a one-year import's
/// instructions went to such hashing and comparing, docs/benchmarks-history.md).
///
/// It is only a shortcut: a string met for the first time, an equal string with other storage,
/// or one whose slot another took, costs one `compute`, whose answer must depend on the strings'
/// contents alone. Each slot keeps its strings, so the storage their words point to cannot be
/// freed and reused for another string while the slot remembers it. Direct-mapped, 64 slots; one
/// thread's (not `Sendable`). Inlinable, so that each module's use is specialized for its
/// `Value`: the generic code went through type metadata for every lookup, slower than hashing.
public final class StringMemo<Value> {
    @usableFromInline static var slotCount: Int { 64 }

    @usableFromInline let words: UnsafeMutablePointer<Words>
    @usableFromInline let keys: UnsafeMutablePointer<(String, String)>
    @usableFromInline let values: UnsafeMutablePointer<Value?>

    @usableFromInline typealias Words = (UInt64, UInt64, UInt64, UInt64)

    public init() {
        words = .allocate(capacity: Self.slotCount)
        words.initialize(repeating: (0, 0, 0, 0), count: Self.slotCount)
        keys = .allocate(capacity: Self.slotCount)
        keys.initialize(repeating: ("", ""), count: Self.slotCount)
        values = .allocate(capacity: Self.slotCount)
        values.initialize(repeating: nil, count: Self.slotCount)
    }

    deinit {
        keys.deinitialize(count: Self.slotCount)
        values.deinitialize(count: Self.slotCount)
        words.deallocate()
        keys.deallocate()
        values.deallocate()
    }

    /// The value for `key`: remembered, or `compute(key)` remembered now.
    @inlinable @inline(__always)
    public func value(for key: String, _ compute: (String) throws -> Value) rethrows -> Value {
        try value(for: key, "") { first, _ in try compute(first) }
    }

    /// The value for the pair `first`, `second`: remembered, or `compute` remembered now.
    @inlinable @inline(__always)
    public func value(for first: String, _ second: String, _ compute: (String, String) throws -> Value) rethrows -> Value {
        let a = unsafeBitCast(first, to: (UInt64, UInt64).self)
        let b = unsafeBitCast(second, to: (UInt64, UInt64).self)
        let key: Words = (a.0, a.1, b.0, b.1)
        let mixed = (a.0 &+ a.1 &* 31 &+ b.0 &* 961 &+ b.1 &* 29_791) &* 0x9E37_79B9_7F4A_7C15
        let slot = Int(truncatingIfNeeded: mixed >> 58)
        let held = words[slot]
        if held.0 == key.0, held.1 == key.1, held.2 == key.2, held.3 == key.3, let known = values[slot] { return known }
        let computed = try compute(first, second)
        words[slot] = key
        keys[slot] = (first, second)
        values[slot] = computed
        return computed
    }
}
