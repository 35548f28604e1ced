import HealthModel
import TestSupport
import Testing

/// `StringMemo` is a shortcut only: whatever strings it meets, in whatever order and storage, it
/// answers what `compute` answers for their contents, and computes again only what it must.
@Suite struct StringMemoTests {
    /// A string with its own storage (not a literal, not shared with another equal string).
    private func fresh(_ s: String) -> String { String(decoding: Array(s.utf8), as: UTF8.self) }

    @Test func aStringMetAgainIsNotComputedAgain() {
        let memo = StringMemo<Int>()
        var computed: [String] = []
        let type = fresh("HKQuantityTypeIdentifierStepCount")
        for _ in 0..<3 {
            #expect(memo.value(for: type) { computed.append($0); return $0.count } == 33)
        }
        #expect(computed == ["HKQuantityTypeIdentifierStepCount"])
    }

    @Test func equalStringsWithOtherStorageGetTheSameAnswer() {
        let memo = StringMemo<Int>()
        var computations = 0
        let first = fresh("HKQuantityTypeIdentifierHeartRate")
        let second = fresh("HKQuantityTypeIdentifierHeartRate")
        #expect(memo.value(for: first) { computations += 1; return $0.utf8.count } == 33)
        #expect(memo.value(for: second) { computations += 1; return $0.utf8.count } == 33)
        // The second has other storage: computed again, same answer.
        #expect(computations == 2)
    }

    @Test func differentStringsNeverShareAnAnswer() {
        // Many strings, small and large, looked up in a shuffled order over and over: slots are
        // taken by others and strings die and others are made (their storage may reuse freed
        // memory), and each answer is always the string's own.
        let memo = StringMemo<String>()
        let seed = TestSeed()
        var rng = seed.generator
        var live = (0..<200).map { fresh("HKQuantityTypeIdentifier\($0)") } + (0..<50).map { "u\($0)" }
        for round in 0..<40 {
            for s in live.shuffled(using: &rng) {
                #expect(memo.value(for: s) { String($0.reversed()) } == String(s.reversed()), "\(seed)")
            }
            // Replace a few strings with new ones.
            for i in 0..<10 { live[(round * 10 + i) % live.count] = fresh("HKCategoryTypeIdentifier\(round)-\(i)") }
        }
    }

    @Test func pairsAreKeyedByBothStrings() {
        let memo = StringMemo<String>()
        let type = fresh("HKQuantityTypeIdentifierBodyMass")
        let kg = fresh("kg"), lb = fresh("lb")
        #expect(memo.value(for: type, kg) { "\($0)|\($1)" } == "HKQuantityTypeIdentifierBodyMass|kg")
        #expect(memo.value(for: type, lb) { "\($0)|\($1)" } == "HKQuantityTypeIdentifierBodyMass|lb")
        #expect(memo.value(for: kg, type) { "\($0)|\($1)" } == "kg|HKQuantityTypeIdentifierBodyMass")
        // The lookups between may have taken the pair's slot (the memo is direct-mapped, and a
        // heap string's address picks the slot): met once more, and then again, the second
        // is answered from memory.
        #expect(memo.value(for: type, kg) { "\($0)|\($1)" } == "HKQuantityTypeIdentifierBodyMass|kg")
        var again = 0
        #expect(memo.value(for: type, kg) { again += 1; return "\($0)|\($1)" } == "HKQuantityTypeIdentifierBodyMass|kg")
        #expect(again == 0)
    }

    @Test func aThrowingComputationRemembersNothing() {
        struct Refused: Error {}
        let memo = StringMemo<Int>()
        let key = fresh("HKQuantityTypeIdentifierDistanceCycling")
        #expect(throws: Refused.self) { try memo.value(for: key) { _ in throw Refused() } }
        #expect(memo.value(for: key) { $0.count } == 39)
    }
}
