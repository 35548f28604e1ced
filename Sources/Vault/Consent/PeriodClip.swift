import HealthModel
import Projections

/// The part of a sample's time span that lies inside a consent's data period. The period runs from
/// local midnight starting `from` to local midnight ending `to` in the sample's own clock, so a
/// sample is clipped where its clock says the period begins and ends, across DST changes and
/// travel alike. A sample whose start and end carry different offsets (a DST switch, a flight)
/// has two clocks: the period is where both agree (the later start, the earlier end), so neither
/// end of what leaves falls on a day outside the period in its own offset.
///
/// A span that reaches outside the period is cut at the edge (`clipped`); a span with nothing inside
/// is dropped; an instant (start equal to end) is kept when it lies inside.
struct PeriodClip: Equatable {
    var start: HealthTimestamp
    var end: HealthTimestamp
    /// Whether an edge was moved.
    var clipped: Bool
    /// The share of the original span that is kept (1 when nothing was cut): what a cumulative
    /// quantity is multiplied by.
    var fraction: Double

    /// `nil` when nothing of the span lies inside `from...to` (either open).
    init?(start: HealthTimestamp, end: HealthTimestamp, from: LocalDay?, to: LocalDay?) {
        let offsets = [Int64(start.utcOffset), Int64(end.utcOffset)]
        let lower = from.map { day in offsets.map { day.dayNumber * 86_400 - $0 }.max()! }
        let upper = to.map { day in offsets.map { (day.dayNumber + 1) * 86_400 - $0 }.min()! }
        guard end.seconds > start.seconds else {
            // An instant, or a span whose end is before its start: placed by its start alone.
            if let lower, start.seconds < lower { return nil }
            if let to, LocalDay(instant: start.seconds, utcOffset: start.utcOffset) > to { return nil }
            self.start = start
            self.end = end
            clipped = false
            fraction = 1
            return
        }
        var newStart = start, newEnd = end
        if let lower, newStart.seconds < lower { newStart.seconds = lower }
        if let upper, newEnd.seconds > upper { newEnd.seconds = upper }
        guard newEnd.seconds > newStart.seconds else { return nil }
        self.start = newStart
        self.end = newEnd
        clipped = newStart != start || newEnd != end
        fraction = clipped ? Double(newEnd.seconds - newStart.seconds) / Double(end.seconds - start.seconds) : 1
    }
}
