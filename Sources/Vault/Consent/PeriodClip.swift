import HealthModel
import Projections

/// The part of a sample's time span that lies inside a consent's data period. The period runs from
/// local midnight starting `from` to local midnight ending `to` in the sample's own clock, so a
/// sample is clipped where its clock says the period begins and ends, across DST changes and
/// travel alike. A sample whose start and end carry different offsets (a DST switch, a flight)
/// has two clocks: a cut edge is midnight in the clock of the end nearer it (`init`).
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
    ///
    /// A cut edge lies at local midnight, but the export knows only the offsets of the span's two
    /// ends, not the one in force at the cut. It takes the offset of the end nearer the cut: a DST
    /// change hours before it, or a trip weeks after it, then gives the offset of that time and
    /// place; a far end outside the period (a September offset on a January edge) is not shared.
    init?(start: HealthTimestamp, end: HealthTimestamp, from: LocalDay?, to: LocalDay?) {
        let lower = from.map { day in Self.cut(at: day.dayNumber * 86_400, start, end) }
        let upper = to.map { day in Self.cut(at: (day.dayNumber + 1) * 86_400, start, end) }
        guard end.seconds > start.seconds else {
            // An instant, or a span whose end is before its start: placed by its start alone.
            if let lower, start.seconds < lower.seconds { return nil }
            if let to, LocalDay(instant: start.seconds, utcOffset: start.utcOffset) > to { return nil }
            self.start = start
            self.end = end
            clipped = false
            fraction = 1
            return
        }
        var newStart = start, newEnd = end
        if let lower, newStart.seconds < lower.seconds { newStart = lower }
        if let upper, newEnd.seconds > upper.seconds { newEnd = upper }
        guard newEnd.seconds > newStart.seconds else { return nil }
        self.start = newStart
        self.end = newEnd
        clipped = newStart != start || newEnd != end
        fraction = clipped ? Double(newEnd.seconds - newStart.seconds) / Double(end.seconds - start.seconds) : 1
    }

    /// The instant of local midnight `localSeconds` (seconds since 1970 in local time) in the
    /// offset of whichever end of the span lies nearer it (the start on a tie).
    private static func cut(at localSeconds: Int64, _ start: HealthTimestamp, _ end: HealthTimestamp) -> HealthTimestamp {
        let byStart = localSeconds - Int64(start.utcOffset), byEnd = localSeconds - Int64(end.utcOffset)
        return abs(end.seconds - byEnd) < abs(start.seconds - byStart)
            ? HealthTimestamp(seconds: byEnd, utcOffset: end.utcOffset)
            : HealthTimestamp(seconds: byStart, utcOffset: start.utcOffset)
    }
}
