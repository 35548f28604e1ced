@testable import Importers
import Testing

/// The importer's string pool: equal bytes give the pooled string, different bytes (even with
/// equal hashes' chances, lengths or prefixes) never do, and it starts over when full.
@Suite struct StringPoolTests {
    private func pooled(_ pool: inout StringPool, _ text: String) -> String {
        var copy = text
        return copy.withUTF8 { pool.string(UnsafeRawBufferPointer($0)) }
    }

    @Test func equalBytesGiveTheSameStringAndDifferentBytesTheirOwn() {
        var pool = StringPool(known: ["HKQuantityTypeIdentifierStepCount"])
        let texts = ["", "a", "ab", "abcdefgh", "abcdefghi", "abcdefgh\u{0}", "Alex’s Apple Watch", "HKQuantityTypeIdentifierStepCount"]
        for text in texts { #expect(pooled(&pool, text) == text) }
        for text in texts.reversed() { #expect(pooled(&pool, text) == text) }
    }

    @Test func aFullPoolStartsOverKeepingItsKnownStrings() {
        var pool = StringPool(known: ["known"])
        #expect(pool.count == 1)
        for i in 0..<(StringPool.capacity + 10) { #expect(pooled(&pool, "value \(i)") == "value \(i)") }
        // Full at the known string and `capacity` values, the pool started over at value
        // `capacity`: it holds the known string and the ten values since.
        #expect(pool.count == 11)
        #expect(pooled(&pool, "known") == "known" && pool.count == 11)
        // An early value was forgotten by the restart (added again), a late one was not.
        #expect(pooled(&pool, "value 3") == "value 3" && pool.count == 12)
        #expect(pooled(&pool, "value \(StringPool.capacity + 9)") == "value \(StringPool.capacity + 9)" && pool.count == 12)
    }
}
