import TestSupport
import Testing
@testable import Projections

/// `CoveredTime.isUncovered` is the shortcut deduplication takes for an interval no better source
/// meets: it must say so exactly when the gaps are the whole interval.
@Suite struct CoveredTimeTests {
    @Test func anIntervalIsUncoveredExactlyWhenItsGapsAreItself() {
        let seed = TestSeed()
        var rng = seed.generator
        for _ in 0..<300 {
            var covered = CoveredTime()
            let spans = (0..<Int.random(in: 0...6, using: &rng)).map { _ -> Interval in
                let start = Int64.random(in: 0...100, using: &rng)
                return Interval(start: start, end: start + Int64.random(in: 0...20, using: &rng), value: 1, source: 0)
            }
            covered.insert(spans)
            for _ in 0..<50 {
                let a = Int64.random(in: -5...125, using: &rng)
                let b = a + Int64.random(in: 1...30, using: &rng)
                let gaps = covered.gaps(in: a, b)
                let whole = gaps.count == 1 && gaps[0].0 == a && gaps[0].1 == b
                #expect(covered.isUncovered(a, b) == whole, "[\(a), \(b)) against \(covered.spans), \(seed)")
            }
        }
    }
}
