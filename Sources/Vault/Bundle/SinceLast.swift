import HealthModel
import VaultEvents

/// `export --since-last`: what the last bundle to the same recipient already held, so that the
/// new one holds only the rest (docs/bundle-format.md, "Since the last bundle").
///
/// The last export's event sits at log index `exportIndex`; a writer holds the log from reading
/// to recording its export, so every event before that index was in its view. A raw line is held
/// when its event came before the export and that export's grants covered it whole (its category,
/// at raw, its span inside the period, uncut). A daily or hourly line is held when its category
/// and day were covered at that granularity and no event after the export touched the day (a
/// sample on it, a tracker entry, a goal from it on for the rings).
struct SinceLast {
    /// The bundle this one follows (its hash) and the index of its export event.
    let follows: String
    let exportIndex: UInt64
    /// The previous export's grants, for the categories it wrote.
    private let grants: [(category: HealthCategory, grant: ConsentGrant)]
    /// Per category and day, the latest event index that touched the day.
    private let touched: [HealthCategory: [LocalDay: UInt64]]
    /// Goals set, with their first day: a ring's figure changes from there on.
    private let goals: [(index: UInt64, from: LocalDay)]
    /// A source order set since: every deduplicated figure may have changed.
    private let figuresAllChanged: Bool

    /// Nil when nothing was ever exported to `recipient` (the export is then a full one). Reads
    /// the audit trail and the events of `categories` (those the new bundle holds) only.
    init?(vault: Vault, recipient: String, categories: Set<HealthCategory>) throws {
        var ledger = ConsentLedger()
        var last: (index: UInt64, record: ExportRecord, inForce: [HealthCategory: ConsentGrant])?
        var sourceOrderSince: UInt64?
        var touched: [HealthCategory: [LocalDay: UInt64]] = [:]
        var goals: [(UInt64, LocalDay)] = []
        func touch(_ category: HealthCategory, _ start: HealthTimestamp, _ end: HealthTimestamp, _ index: UInt64) {
            let first = LocalDay(instant: start.seconds, utcOffset: start.utcOffset)
            let lastDay = LocalDay(instant: max(end.seconds, start.seconds), utcOffset: end.utcOffset)
            var day = first
            // A span of more than a year is touched at its ends only.
            if lastDay.dayNumber - first.dayNumber > 366 {
                touched[category, default: [:]][first] = index
                touched[category, default: [:]][lastDay] = index
                return
            }
            while day <= lastDay {
                touched[category, default: [:]][day] = index
                day = LocalDay(dayNumber: day.dayNumber + 1)
            }
        }
        try vault.forEachEvent(sealedBy: vault.liveKeys(of: categories), audit: true) { index, event in
            ledger.apply(event)
            switch event {
            case .exportPerformed(let record) where record.recipient == recipient:
                // What was in force for each category when that export was made: the grant it used.
                let inForce = ledger.inForce(for: recipient, on: LocalDay.today(now: record.at))
                last = (index, record, inForce.filter { record.counts[$0.key.rawValue] != nil })
            case .sample(let s): touch(s.category, s.start, s.end, index)
            case .workout(let w): touch(.workouts, w.start, w.end, index)
            case .trackerEntry(let entry): touched[entry.category, default: [:]][entry.day] = index
            case .practiceLogged(let entry): touched[.workouts, default: [:]][entry.day] = index
            case .goalSet(let goal): goals.append((index, goal.from))
            // Apple's summaries carry goals forward from their day on, like a goal set.
            case .activitySummary(let summary): goals.append((index, LocalDay(dayNumber: summary.day)))
            // A new source order changes every deduplicated figure.
            case .sourceOrderSet: sourceOrderSince = index
            default: break
            }
        }
        guard let last else { return nil }
        follows = last.record.bundleHash
        exportIndex = last.index
        grants = last.inForce.map { ($0.key, $0.value) }
        figuresAllChanged = (sourceOrderSince ?? 0) > last.index
        self.touched = touched
        self.goals = goals
    }

    /// Whether the last bundle held the raw line of event `index` of `category` spanning `start...end`.
    func heldRaw(_ category: HealthCategory, start: HealthTimestamp, end: HealthTimestamp, index: UInt64) -> Bool {
        guard index < exportIndex else { return false }
        return grants.contains { entry in
            guard entry.category == category, entry.grant.granularity == .raw,
                  let clip = PeriodClip(start: start, end: end, from: entry.grant.from, to: entry.grant.to) else { return false }
            return !clip.clipped
        }
    }

    /// Whether the last bundle held the raw line of event `index` that has no time (a `Me`
    /// characteristic). Records with times (routes, ECGs, correlations) are sent again: the
    /// study's identity of lines takes the copies as duplicates.
    func heldUndated(_ category: HealthCategory, index: UInt64) -> Bool {
        index < exportIndex && grants.contains { $0.category == category && $0.grant.granularity == .raw }
    }

    /// Whether an event after the last export touched `day` of `category`.
    private func touchedSince(_ category: HealthCategory, day: LocalDay) -> Bool {
        (touched[category]?[day]).map { $0 > exportIndex } ?? false
    }

    /// Whether the last bundle held the `granularity` figures of `category` on `day`, unchanged since.
    func heldAggregate(_ category: HealthCategory, _ granularity: Granularity, day: LocalDay, ringFigure: Bool = false) -> Bool {
        if figuresAllChanged || touchedSince(category, day: day) { return false }
        // A night's figures (by the day it ends) are touched by samples of the evening before too.
        if category == .sleep, granularity == .daily, touchedSince(.sleep, day: LocalDay(dayNumber: day.dayNumber - 1)) { return false }
        if ringFigure, goals.contains(where: { $0.index > exportIndex && $0.from <= day }) { return false }
        return grants.contains { $0.category == category && $0.grant.granularity == granularity && $0.grant.covers(day: day) }
    }
}
