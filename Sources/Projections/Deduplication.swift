/// Counts each stretch of time once, from the best-ranked source that covers it, as the Health
/// app's statistics do.
///
/// Every interval keeps the part of its span that no better-ranked source covers, and that
/// part's share of its value (a sample is assumed to accrue evenly over its span). A zero-length
/// sample counts unless a better-ranked source covers its instant. Samples of the same source
/// never hide each other, but an app's rewritten copies of one sample count once
/// (`RewrittenCopies`).
enum Deduplication {
    /// A piece of time that counts, with the value it carries.
    struct Piece: Equatable {
        var start: Int64
        var end: Int64
        var value: Double
    }

    /// The pieces that count. `rank(source)` orders sources, lower first; `intervals` must be
    /// sorted by `Interval.precedes`.
    static func effectivePieces(_ sorted: [Interval], rank: (Int32) -> Int) -> [Piece] {
        let intervals = RewrittenCopies.countedOnce(sorted)
        var pieces: [Piece] = []
        pieces.reserveCapacity(intervals.count)
        // Group by rank (stable, so each group keeps the deterministic order).
        var byRank: [Int: [Interval]] = [:]
        for interval in intervals { byRank[rank(interval.source), default: []].append(interval) }
        var better = CoveredTime()
        for r in byRank.keys.sorted() {
            let group = byRank[r]!
            for interval in group {
                if interval.end <= interval.start {
                    if !better.covers(instant: interval.start) {
                        pieces.append(Piece(start: interval.start, end: interval.start, value: interval.value))
                    }
                    continue
                }
                // Most intervals meet no better source (the best rank's all do): whole, with no
                // list of gaps made for them.
                if better.isUncovered(interval.start, interval.end) {
                    pieces.append(Piece(start: interval.start, end: interval.end, value: interval.value))
                    continue
                }
                let duration = Double(interval.end - interval.start)
                let gaps = better.gaps(in: interval.start, interval.end)
                if gaps.count == 1, gaps[0].0 == interval.start, gaps[0].1 == interval.end {
                    pieces.append(Piece(start: interval.start, end: interval.end, value: interval.value))
                } else {
                    for (a, b) in gaps {
                        pieces.append(Piece(start: a, end: b, value: interval.value * Double(b - a) / duration))
                    }
                }
            }
            // Only after the whole rank: a source's own samples do not hide each other.
            better.insert(group)
        }
        return pieces
    }

    /// The deduplicated total.
    static func total(_ intervals: [Interval], rank: (Int32) -> Int) -> Double {
        var sum = 0.0
        for piece in effectivePieces(intervals, rank: rank) { sum += piece.value }
        return sum
    }
}

/// A union of half-open spans, kept sorted and disjoint, with zero-length instants beside it.
struct CoveredTime {
    private(set) var spans: [(Int64, Int64)] = []
    private var instants: Set<Int64> = []

    func covers(instant t: Int64) -> Bool {
        if instants.contains(t) { return true }
        let i = firstSpan(endingAfter: t)
        return i < spans.count && spans[i].0 <= t
    }

    /// Whether no span meets [a, b): `gaps(in: a, b)` would be `[(a, b)]`.
    func isUncovered(_ a: Int64, _ b: Int64) -> Bool {
        let i = firstSpan(endingAfter: a)
        return i == spans.count || spans[i].0 >= b
    }

    /// The parts of [a, b) not covered, in order.
    func gaps(in a: Int64, _ b: Int64) -> [(Int64, Int64)] {
        var result: [(Int64, Int64)] = []
        var cursor = a
        var i = firstSpan(endingAfter: a)
        while i < spans.count, spans[i].0 < b {
            if spans[i].0 > cursor { result.append((cursor, spans[i].0)) }
            cursor = max(cursor, spans[i].1)
            i += 1
        }
        if cursor < b { result.append((cursor, b)) }
        return result
    }

    /// Adds intervals (zero-length ones as instants).
    mutating func insert(_ intervals: [Interval]) {
        var all = spans
        for i in intervals {
            if i.end > i.start { all.append((i.start, i.end)) } else { instants.insert(i.start) }
        }
        all.sort { $0.0 < $1.0 }
        var merged: [(Int64, Int64)] = []
        merged.reserveCapacity(all.count)
        for s in all {
            if let last = merged.last, s.0 <= last.1 {
                merged[merged.count - 1].1 = max(last.1, s.1)
            } else {
                merged.append(s)
            }
        }
        spans = merged
    }

    /// Index of the first span whose end is after `t` (binary search).
    private func firstSpan(endingAfter t: Int64) -> Int {
        var lo = 0, hi = spans.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if spans[mid].1 <= t { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}
