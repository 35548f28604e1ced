import HealthModel
import Testing

/// `SourceMemo` answers by instance, for the last four sources met, and is only a shortcut: an
/// equal source in another instance is computed again, with the same answer.
@Suite struct SourceMemoTests {
    @Test func theLastFourInstancesAreAnsweredFromMemory() {
        let memo = SourceMemo<String>()
        let sources = ["Phone", "Watch", "Ring", "Scale"].map { HealthSource(name: $0) }
        var computed: [String] = []
        for _ in 0..<3 {
            for source in sources {
                #expect(memo.value(for: source) { computed.append($0.name); return $0.name + "!" } == source.name + "!")
            }
        }
        #expect(computed == ["Phone", "Watch", "Ring", "Scale"])
    }

    @Test func aFifthSourceTakesTheOldestSlotAndAnEqualInstanceIsComputedAgain() {
        let memo = SourceMemo<Int>()
        let sources = ["Phone", "Watch", "Ring", "Scale", "Band"].map { HealthSource(name: $0) }
        var computed: [String] = []
        for source in sources { _ = memo.value(for: source) { computed.append($0.name); return $0.name.count } }
        // "Band" took "Phone"'s slot: Phone is computed again, Band is answered from memory.
        #expect(memo.value(for: sources[0]) { computed.append($0.name); return $0.name.count } == 5)
        #expect(memo.value(for: sources[4]) { computed.append($0.name); return $0.name.count } == 4)
        let equal = HealthSource(name: "Ring")
        #expect(equal == sources[2] && !equal.isIdentical(to: sources[2]))
        #expect(memo.value(for: equal) { computed.append($0.name + " again"); return $0.name.count } == 4)
        #expect(computed == ["Phone", "Watch", "Ring", "Scale", "Band", "Phone", "Ring again"])
    }
}
