import HealthModel

/// The months of each category whose keys were destroyed, as exports keep clear of them.
///
/// A sample belongs to the month it starts in, so a night that began on the last evening of a
/// month lives under that month's key and survives the erasure of the next; its part in the
/// erased month must not leave either. Exports cut such a span at the local midnight the erased
/// month begins with, in the span's own clock (a cumulative amount pro rata, marked clipped), and
/// leave out the hourly and daily figures of days in erased months.
struct ErasedMonths {
    private var byCategory: [HealthCategory: [LocalMonth]] = [:]

    init(_ labels: Set<DataLabel>) {
        for label in labels { if let month = label.month { byCategory[label.category, default: []].append(month) } }
        for key in byCategory.keys { byCategory[key]!.sort() }
    }

    var isEmpty: Bool { byCategory.isEmpty }

    /// Whether `day` lies in an erased month of `category`.
    func contains(_ category: HealthCategory, day: LocalDay) -> Bool {
        byCategory[category]?.contains(LocalMonth(day)) ?? false
    }

    /// The last day a span of `category` starting at `start` may reach: the day before the first
    /// erased month after the one it starts in, capped by `to`; `to` when there is none.
    func lastDay(of category: HealthCategory, startingAt start: HealthTimestamp, before to: LocalDay?) -> LocalDay? {
        // Most categories have no erased month: nothing to compute per span for them.
        guard let months = byCategory[category] else { return to }
        let month = DataLabel.month(of: start)
        guard let next = months.first(where: { $0 > month }) else { return to }
        let cap = LocalDay(dayNumber: next.days.lowerBound.dayNumber - 1)
        return to.map { min($0, cap) } ?? cap
    }
}
