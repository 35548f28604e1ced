import Foundation
import HealthModel
import Projections
import ResearchBundle
import VaultEvents

/// The second and third sources of a bundle's lines, from one pass over the frames of the plan's
/// keys only (`ExportPlan.keys`): each sample and record of a raw grant as recorded (cut to the
/// data period), hourly figures of an hourly grant, and tracker entries, whose day's last entry
/// is the day's figure at daily and hourly grants. Hourly figures come from the samples, with the
/// read models' rules (`HourlyAggregator`), rather than from a read model of their own: keeping
/// every metric's hours would cost every vault 24 rows per day and metric for what only an
/// hourly grant reads, and the scan reads no more than the granted categories' keys.
extension ExportPlan {
    func scannedLines(vault: Vault, models: ReadModels, _ emit: Emit) throws {
        guard !keys.isEmpty else { return }
        let ranks = Dictionary(try models.sources().map { ($0.key, $0.rank) }, uniquingKeysWith: { a, _ in a })
        var hourly: [HealthCategory: HourlyAggregator] = [:]
        for (category, grant) in grants where grant.granularity == .hourly {
            hourly[category] = HourlyAggregator { ranks[$0] ?? Int.max }
        }
        var feed = ProjectionFeed()
        var trackerDays = TrackerDays()
        var sources = SourceFields.Memo()
        // Samples a re-posted value replaced are out of every bundle.
        var superseded = SampleContent.Skipping(try models.supersededSamples())
        func record(_ category: HealthCategory, _ line: RecordLine) throws { try emit(category, .record(line)) }
        try vault.forEachEvent(sealedBy: keys) { index, event in
            if case .sample(let s) = event, superseded.skips(s) { return }
            switch event {
            case .sample(let s):
                let category = s.category
                guard let grant = grants[category], grant.granularity != .daily, grant.admits(category, type: s.type) else { return }
                if grant.granularity == .raw {
                    if let since, since.heldRaw(category, start: s.start, end: s.end, index: index) { return }
                    if let line = rawLine(of: s, grant: grant, sources: &sources) { try record(category, line) }
                } else if let input = feed.input(for: event) {
                    // Hourly rows are split at hour boundaries and kept to the period by their hour's day below.
                    hourly[category]!.add(input)
                }
            case .workout(let w):
                guard let grant = grant(.workouts, at: .raw),
                      let clip = PeriodClip(start: w.start, end: w.end, from: grant.from,
                                            to: erased.lastDay(of: .workouts, startingAt: w.start, before: grant.to)) else { return }
                if let since, since.heldRaw(.workouts, start: w.start, end: w.end, index: index) { return }
                let duration = w.duration.map { clip.clipped ? DecimalValue(double: AggregateLine.micro($0.double * clip.fraction)) : $0 }
                try record(.workouts, RecordLine(category: "workouts", type: w.activityType, start: clip.start, end: clip.end,
                                                 value: duration.map { .decimal($0) } ?? .none, unit: duration == nil ? nil : "min",
                                                 clipped: clip.clipped, fields: sources.fields(of: w.source, metadata: w.metadata)))
            case .practiceLogged(let p):
                let end = HealthTimestamp(seconds: p.at.seconds + Int64(p.seconds ?? 0), utcOffset: p.at.utcOffset)
                // A set running past the period (23:55 on its last day, ten minutes) is cut at its edge.
                guard let grant = grant(.workouts, at: .raw),
                      let clip = PeriodClip(start: p.at, end: end, from: grant.from, to: erased.lastDay(of: .workouts, startingAt: p.at, before: grant.to))
                else { return }
                if let since, since.heldRaw(.workouts, start: p.at, end: end, index: index) { return }
                var fields: [RecordLine.Field] = [.init("exercise", .text(p.exercise.name)),
                                                  .init("bodyParts", .text(p.exercise.bodyParts.map(\.rawValue).joined(separator: ","))),
                                                  .init("motion", .text(p.exercise.motion.rawValue))]
                if let seconds = p.seconds { fields.append(.init("minutes", .number(Double(seconds) / 60))) }
                try record(.workouts, RecordLine(category: "workouts", type: "practice", start: clip.start, end: clip.end,
                                                 value: .decimal(DecimalValue(mantissa: Int64(p.repetitions), scale: 0)), unit: "reps",
                                                 clipped: clip.clipped, fields: fields))
            case .trackerEntry(let entry):
                guard let grant = grants[entry.category], grant.covers(day: entry.day) else { return }
                if grant.granularity == .raw {
                    // Its time too: an entry before the day start lies on the next calendar day.
                    guard PeriodClip(start: entry.at, end: entry.at, from: grant.from, to: grant.to) != nil else { return }
                    if let since, since.heldRaw(entry.category, start: entry.at, end: entry.at, index: index) { return }
                    try record(entry.category, RecordLine(category: entry.category.rawValue, type: entry.tracker, start: entry.at, end: entry.at,
                                                          value: .decimal(entry.value), unit: nil))
                } else {
                    trackerDays.add(entry)
                }
            case .route, .characteristics, .correlation, .genericRecord, .electrocardiogram:
                guard let label = DataLabel.of(event), let grant = grant(label.category, at: .raw) else { return }
                // A `Me` characteristic is held by its event's place and its category's grant.
                if let since, case .characteristics = event, since.heldUndated(label.category, index: index) { return }
                try RecordLines.lines(of: event, category: label.category, grant: grant) { try record(label.category, $0) }
            default:
                return
            }
        }
        try trackerFigures(trackerDays, emit)
        try hourlyFigures(hourly, emit)
    }

    /// A sample's raw line: nothing outside the data period (the span is cut at its edges), in
    /// the unit people read (g of protein, mg/dL of glucose), exact when stored exact; nil when
    /// nothing of it lies inside.
    private func rawLine(of s: HealthSample, grant: ConsentGrant, sources: inout SourceFields.Memo) -> RecordLine? {
        let to = erased.lastDay(of: s.category, startingAt: s.start, before: grant.to)
        guard let clip = PeriodClip(start: s.start, end: s.end, from: grant.from, to: to) else { return nil }
        let value: RecordLine.Value
        var unit: String?
        switch s.value {
        case .quantity(let stored, let u):
            let reading = ReadingUnits.reading(type: s.type, unit: u)
            unit = reading?.unit ?? u
            let v = reading.map { stored.scaled(by: $0.factor) } ?? stored
            if clip.clipped, AggregationStyle.of(type: s.type) == .cumulative {
                value = .decimal(DecimalValue(double: AggregateLine.micro(v.double * clip.fraction)))
            } else {
                value = .decimal(v)
            }
        case .category(let text): value = .text(text)
        case .none: value = .none
        }
        return RecordLine(category: s.category.rawValue, type: s.type, start: clip.start, end: clip.end, value: value, unit: unit,
                          clipped: clip.clipped, fields: sources.fields(of: s.source, metadata: s.metadata))
    }

    /// Tracker days of daily and hourly grants: each day's last entry (a tracker's unit is the day).
    private func trackerFigures(_ days: TrackerDays, _ emit: Emit) throws {
        for (category, trackers) in days.lastEntries {
            for (tracker, days) in trackers.sorted(by: { $0.key < $1.key }) {
                for (day, entry) in days.sorted(by: { $0.key < $1.key }) {
                    if let since, since.heldAggregate(category, grants[category]!.granularity, day: day) { continue }
                    try emit(category, .figure(.exported(category: category.rawValue, metric: tracker, period: day.description,
                                                         value: entry.value.double, unit: "level", min: nil, max: nil, samples: 1)))
                }
            }
        }
    }

    /// Hourly figures, kept to the data period by the hour's own day, less the hours
    /// `withheldHours` keeps back.
    private func hourlyFigures(_ hourly: [HealthCategory: HourlyAggregator], _ emit: Emit) throws {
        for (category, aggregator) in hourly {
            let rows = aggregator.rows()
            let withheld = Self.withheldHours(rows)
            for (index, row) in rows.enumerated() {
                guard let day = LocalDay(parsing: String(row.period.prefix(10))), grants[category]!.covers(day: day),
                      !erased.contains(category, day: day) else { continue }
                if let since, since.heldAggregate(category, .hourly, day: day) { continue }
                if withheld.contains(index) { continue }
                try emit(category, .figure(.exported(category: category.rawValue, metric: row.metric, period: row.period, value: row.value,
                                                     unit: row.unit, min: row.min, max: row.max, samples: row.samples)))
            }
        }
    }

    /// The hourly rows an export withholds, by index. A discrete metric's hour with a single
    /// reading is that reading, timed to the hour: closer to raw data than the grant allows. And
    /// when a day of a metric withholds exactly one such hour, the day's other hours and a daily
    /// figure of the same day (another bundle's) would give it back by subtraction, so the hour
    /// of that day with the fewest readings is withheld with it: only their sum can be known.
    static func withheldHours(_ rows: [HourlyAggregator.Row]) -> Set<Int> {
        var withheld: Set<Int> = []
        var byDay: [String: [Int]] = [:]
        for (index, row) in rows.enumerated() where row.min != nil {
            byDay[row.metric + "\u{0}" + row.period.prefix(10), default: []].append(index)
            if row.samples < 2 { withheld.insert(index) }
        }
        for indices in byDay.values where indices.filter(withheld.contains).count == 1 {
            let kept = indices.filter { !withheld.contains($0) }
            if let fewest = kept.min(by: { (rows[$0].samples, $0) < (rows[$1].samples, $1) }) { withheld.insert(fewest) }
        }
        return withheld
    }
}

/// Each tracker's last entry per day and category, for figures.
struct TrackerDays {
    private(set) var lastEntries: [HealthCategory: [String: [LocalDay: TrackerEntry]]] = [:]

    mutating func add(_ entry: TrackerEntry) {
        if lastEntries[entry.category]?[entry.tracker]?[entry.day].map({ $0.at.seconds <= entry.at.seconds }) ?? true {
            lastEntries[entry.category, default: [:]][entry.tracker, default: [:]][entry.day] = entry
        }
    }
}
