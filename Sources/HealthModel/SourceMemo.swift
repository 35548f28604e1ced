/// Values worked out from a source, remembered for the last few sources by instance
/// (`HealthSource.isIdentical(to:)`).
///
/// An export interleaves the phone's and the watch's records, so a one-entry "last source"
/// missed on most samples and its miss compared or hashed the source's seven strings (measured:
/// ~2 % of a one-year import's instructions, and each comparison copied the device's five
/// strings, docs/benchmarks-history.md). The parser hands out one instance per source it meets, so a hit
/// here compares a word.
///
/// It is only a shortcut: an equal source in another instance costs one `compute`, whose answer
/// must depend on the source's contents alone. Each slot keeps its source alive. Four slots,
/// replaced in turn; one thread's (not `Sendable`). Inlinable, so that each module's use is
/// specialized for its `Value` (see `StringMemo`).
public final class SourceMemo<Value> {
    @usableFromInline static var slotCount: Int { 4 }

    @usableFromInline let sources: UnsafeMutablePointer<HealthSource?>
    @usableFromInline let values: UnsafeMutablePointer<Value?>
    /// The slot the next miss takes.
    @usableFromInline var next = 0

    public init() {
        sources = .allocate(capacity: Self.slotCount)
        sources.initialize(repeating: nil, count: Self.slotCount)
        values = .allocate(capacity: Self.slotCount)
        values.initialize(repeating: nil, count: Self.slotCount)
    }

    deinit {
        sources.deinitialize(count: Self.slotCount)
        values.deinitialize(count: Self.slotCount)
        sources.deallocate()
        values.deallocate()
    }

    /// The value for `source`: remembered, or `compute(source)` remembered now.
    @inlinable @inline(__always)
    public func value(for source: HealthSource, _ compute: (HealthSource) throws -> Value) rethrows -> Value {
        for slot in 0..<Self.slotCount {
            if let held = sources[slot], held.isIdentical(to: source), let known = values[slot] { return known }
        }
        let computed = try compute(source)
        sources[next] = source
        values[next] = computed
        next = (next + 1) % Self.slotCount
        return computed
    }
}
