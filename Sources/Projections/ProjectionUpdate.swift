import HealthModel

/// One update of the read models, inside `ReadModels.update`'s transaction: inputs are gathered
/// in memory per metric and day, then merged into the stored days, whose totals are recomputed
/// from all their intervals. A day's figures are therefore a function of the samples it holds,
/// whatever order and batches they came in: a rebuild gives exactly the incremental result.
public struct ProjectionUpdate {
    struct DayKey: Hashable {
        var metric: Int64
        var day: Int64
    }

    /// Inputs held in memory before they are merged into the database. An import that feeds the
    /// read models as it goes holds fewer, so that little is left to merge after its last event.
    public var flushThreshold = 250_000

    let db: SQLiteConnection
    var metrics: [MetricKey: (id: Int64, cumulative: Bool)] = [:]
    var sources: SourceTable
    var pendingIntervals: [DayKey: [Interval]] = [:]
    /// Open runs of intervals, one per metric at most (the oldest first): a metric's samples come
    /// day by day, so they gather here and go into `pendingIntervals` when the metric's day
    /// changes (one hash a run, not one a sample). An export interleaves a few types record by
    /// record, so a single open run ended on nearly every sample (195,000 lookups a year of
    /// data, measured); up to `openRunLimit` metrics are open at once.
    private var intervalRuns: [(key: DayKey, intervals: [Interval])] = []
    /// Intervals of replaced samples, taken out of their days at the next flush.
    var pendingRemovals: [DayKey: [Interval]] = [:]
    /// Discrete metric-days a replaced sample left: their minimum and maximum are restated from
    /// the day's readings (`restateDiscreteDays`).
    private var discreteWithdrawn: [DayKey: MetricKey] = [:]
    var pendingDiscrete: [DayKey: DiscreteStats] = [:]
    /// Open runs of discrete metric-days' stats, as `intervalRuns`.
    private var discreteRuns: [(key: DayKey, stats: DiscreteStats)] = []
    var pendingStand: [Int64: Set<Int64>] = [:]
    var pendingAppleRings: [Int64: AppleRings] = [:]
    /// What `types` counts: held type ids by type and unit, and counts per type and day pending
    /// (day `undatedDay` for undated records).
    var heldTypes: HeldTypeTable
    var pendingHeld: [DayKey: HeldTypeTable.Tally] = [:]
    /// The held type of each metric id, so a quantity sample finds its type without hashing.
    private var heldTypeOfMetric: [Int64: Int64] = [:]
    /// Open runs of quantity samples counted per metric and day (with the metric's held type),
    /// as `intervalRuns`: added to `pendingHeld` when a metric's day changes, not hashed one by
    /// one.
    private var heldRuns: [(metric: Int64, day: Int64, held: Int64, count: Int64)] = []
    /// How many metrics may have open runs at once (an export interleaves a handful of types).
    static let openRunLimit = 8
    private var insertSleep: SQLiteStatement?
    private var insertWorkout: SQLiteStatement?
    var pendingCount = 0
    /// Metadata entries counted (or counted off) since the last flush.
    private var pendingMetadata: [MetadataKey: Int64] = [:]
    private var metadataRuns: [(key: MetadataKey, change: Int64)] = []
    private struct MetadataKey: Hashable {
        var type: String
        var key: String
        var value: String
        var day: Int64
        var category: HealthCategory
    }
    /// Rewritten copies (`RewrittenCopies`) the days this update merged into hold, less those
    /// they held before: what an import's rewrites came to.
    public private(set) var rewrittenCopiesAdded = 0
    var orderChanged = false
    /// The metrics of the last inputs, compared before any hashing: a frame holds one category's
    /// month, a few types interleaved.
    /// Metric ids by the identifier's and unit's identity (`StringMemo`): an import's samples
    /// share their strings, so most find their metric without hashing two strings.
    private let recentMetrics = StringMemo<Int64>()
    /// The first day whose goals may have changed (a goal set, Apple's summary, an erasure):
    /// its rings and every later day's are recomputed, since a day's goal carries forward. Nil
    /// when none did.
    var ringsChangedFrom: Int64?
    /// Days whose ring values alone changed (a move or exercise total, stand hours): only those
    /// days' rows are recomputed. A companion's sample used to recompute every ring from its
    /// day to the vault's last (a decade: 110 M instructions, docs/benchmarks.md).
    var ringDaysChanged: Set<Int64> = []
    /// The metric ids of the move and exercise rings' totals, once looked up.
    private var ringMetricIDs: Set<Int64>?

    struct MetricKey: Hashable {
        var identifier: String
        var unit: String
    }

    init(db: SQLiteConnection) throws {
        self.db = db
        let statement = try db.prepare("SELECT id, identifier, unit, cumulative FROM metrics")
        while try statement.step() {
            metrics[MetricKey(identifier: statement.text(1) ?? "", unit: statement.text(2) ?? "")] = (statement.int64(0), statement.int64(3) != 0)
        }
        sources = try SourceTable(db: db)
        heldTypes = try HeldTypeTable(db: db)
    }

    /// Counts one record of a metric on a day, for `types`.
    private mutating func countMetric(_ metric: Int64, identifier: String, unit: String, day: Int64) throws {
        var held: Int64?
        if let i = heldRuns.firstIndex(where: { $0.metric == metric }) {
            if heldRuns[i].day == day {
                heldRuns[i].count += 1
                return
            }
            held = heldRuns[i].held
            endHeldRun(at: i)
        } else if heldRuns.count == Self.openRunLimit {
            endHeldRun(at: 0)
        }
        if held == nil {
            if let known = heldTypeOfMetric[metric] {
                held = known
            } else {
                held = try heldTypes.id(type: identifier, unit: unit, category: HealthCategory.of(type: identifier))
                heldTypeOfMetric[metric] = held
            }
        }
        heldRuns.append((metric, day, held!, 1))
    }

    private mutating func endHeldRun(at index: Int) {
        let run = heldRuns.remove(at: index)
        pendingHeld[DayKey(metric: run.held, day: run.day), default: HeldTypeTable.Tally()].add(count: run.count, minutes: 0)
    }

    private mutating func endHeldRuns() {
        while !heldRuns.isEmpty { endHeldRun(at: heldRuns.count - 1) }
    }

    /// Adds what one event teaches.
    public mutating func add(_ input: ProjectionInput) throws {
        switch input {
        case .cumulative(let s):
            let metric = try metricID(s.metric, unit: s.unit, cumulative: true)
            let source = try sources.id(for: s.source)
            try countMetric(metric, identifier: s.metric, unit: s.unit, day: LocalDay(instant: s.start, utcOffset: s.utcOffset).dayNumber)
            if let (key, interval) = Self.singleDayInterval(of: s, metric: metric, source: source) {
                addInterval(interval, to: key)
            } else {
                for (key, interval) in Self.intervals(of: s, metric: metric, source: source) { addInterval(interval, to: key) }
            }
        case .discrete(let s):
            let metric = try metricID(s.metric, unit: s.unit, cumulative: false)
            let day = LocalDay(instant: s.start, utcOffset: s.utcOffset).dayNumber
            try countMetric(metric, identifier: s.metric, unit: s.unit, day: day)
            let key = DayKey(metric: metric, day: day)
            if let i = discreteRuns.firstIndex(where: { $0.key.metric == metric }) {
                if discreteRuns[i].key.day == day {
                    discreteRuns[i].stats.add(s)
                    break
                }
                endDiscreteRun(at: i)
            } else if discreteRuns.count == Self.openRunLimit {
                endDiscreteRun(at: 0)
            }
            var stats = DiscreteStats()
            stats.add(s)
            discreteRuns.append((key, stats))
        case .standHour(let start, let offset, let stood):
            let day = LocalDay(instant: start, utcOffset: offset).dayNumber
            try count(RecordedItem(type: ProjectionInput.standHourType, category: HealthCategory.of(type: ProjectionInput.standHourType),
                                   day: LocalDay(dayNumber: day)))
            ringDaysChanged.insert(day)
            // An idle hour still makes a day with ring data.
            pendingStand[day, default: []].formUnion(stood ? [LocalDay.floorDivide(start, 3600)] : [])
        case .appleRings(let rings):
            try count(RecordedItem(type: ProjectionInput.activitySummaryType, category: .activity, day: rings.day))
            pendingAppleRings[rings.day.dayNumber] = rings
            ringsChanged(rings.day.dayNumber)
        case .goalSet(let ring, let value, let from):
            let statement = try db.prepare("INSERT INTO goal_changes(ring, value, from_day) VALUES (?, ?, ?)")
            try statement.bind(1, ring.rawValue)
            try statement.bind(2, value)
            try statement.bind(3, from.dayNumber)
            try statement.run()
            ringsChanged(from.dayNumber)
        case .sourceOrder(let keys):
            try flush()
            try sources.setOrder(keys)
            orderChanged = true
        case .erased(let months):
            try flush()
            for erased in months {
                try heldTypes.purge(erased)
                if erased.month != nil { try purge(erased) }
            }
            try heldTypes.removeEmpty()
            heldTypeOfMetric = [:]
            try sources.removeUnused()
            try removeUnusedMetrics()
        case .recorded(let item):
            try count(item)
        case .sleep(let segment):
            let startDay = LocalDay(instant: segment.start.seconds, utcOffset: segment.start.utcOffset)
            try count(RecordedItem(type: ProjectionInput.sleepType, category: .sleep, day: startDay,
                                   minutes: Double(segment.end.seconds - segment.start.seconds) / 60))
            if insertSleep == nil {
                insertSleep = try db.prepare("""
                    INSERT INTO sleep_segments(night, start_day, start, start_offset, end, end_offset, stage, source_id)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """)
            }
            let insert = insertSleep!
            for (i, value) in [segment.night.dayNumber, startDay.dayNumber, segment.start.seconds, Int64(segment.start.utcOffset),
                               segment.end.seconds, Int64(segment.end.utcOffset), Int64(segment.stage.rawValue),
                               Int64(try sources.id(for: segment.source))].enumerated() {
                try insert.bind(Int32(i + 1), value)
            }
            try insert.run()
        case .withdrawn(let w):
            try withdraw(w)
        case .annotated(let inner, let metadata):
            try add(inner)
            tally(metadata, by: 1)
        case .workout(let w):
            let day = LocalDay(instant: w.start, utcOffset: w.utcOffset)
            try count(RecordedItem(type: w.type, category: .workouts, day: day))
            if insertWorkout == nil {
                insertWorkout = try db.prepare("INSERT INTO workouts(day, start, type, minutes, energy, distance) VALUES (?, ?, ?, ?, ?, ?)")
            }
            let insert = insertWorkout!
            try insert.bind(1, day.dayNumber)
            try insert.bind(2, w.start)
            try insert.bind(3, w.type)
            try insert.bind(4, w.minutes)
            try insert.bind(5, w.energy)
            try insert.bind(6, w.distance)
            try insert.run()
        }
        pendingCount += 1
        if pendingCount >= flushThreshold { try flush() }
    }

    private mutating func addInterval(_ interval: Interval, to key: DayKey) {
        if let i = intervalRuns.firstIndex(where: { $0.key.metric == key.metric }) {
            if intervalRuns[i].key.day == key.day {
                intervalRuns[i].intervals.append(interval)
                return
            }
            endIntervalRun(at: i)
        } else if intervalRuns.count == Self.openRunLimit {
            endIntervalRun(at: 0)
        }
        intervalRuns.append((key, [interval]))
    }

    private mutating func endIntervalRun(at index: Int) {
        let run = intervalRuns.remove(at: index)
        pendingIntervals[run.key, default: []].append(contentsOf: run.intervals)
    }

    private mutating func endIntervalRuns() {
        while !intervalRuns.isEmpty { endIntervalRun(at: intervalRuns.count - 1) }
    }

    private mutating func endDiscreteRun(at index: Int) {
        let run = discreteRuns.remove(at: index)
        pendingDiscrete[run.key, default: DiscreteStats()].add(microSum: run.stats.microSum, samples: run.stats.samples, min: run.stats.min, max: run.stats.max)
    }

    private mutating func endDiscreteRuns() {
        while !discreteRuns.isEmpty { endDiscreteRun(at: discreteRuns.count - 1) }
    }

    /// The one interval of a cumulative sample within one local day (most are); nil for one
    /// that crosses midnight.
    static func singleDayInterval(of s: CumulativeSample, metric: Int64, source: Int32) -> (DayKey, Interval)? {
        let firstDay = LocalDay(instant: s.start, utcOffset: s.utcOffset)
        guard s.end <= s.start || s.end <= firstDay.startInstant(utcOffset: s.utcOffset) + 86_400 else { return nil }
        let end = max(s.start, s.end)
        return (DayKey(metric: metric, day: firstDay.dayNumber),
                Interval(start: s.start, end: end, value: s.value, source: source, metadataDigest: s.metadataDigest,
                         creation: Interval.creation(s.created, partEnd: end)))
    }

    /// The intervals a cumulative sample adds to its days: one, or across midnight each day its
    /// part of the span and its share of the value.
    static func intervals(of s: CumulativeSample, metric: Int64, source: Int32) -> [(DayKey, Interval)] {
        if let single = singleDayInterval(of: s, metric: metric, source: source) { return [single] }
        let firstDay = LocalDay(instant: s.start, utcOffset: s.utcOffset)
        var out: [(DayKey, Interval)] = []
        var cursor = s.start
        for part in splitAcrossLocalDays(start: s.start, end: s.end, utcOffset: s.utcOffset, value: s.value) {
            let end = min(s.end, part.day.startInstant(utcOffset: s.utcOffset) + 86_400)
            out.append((DayKey(metric: metric, day: part.day.dayNumber),
                        Interval(start: cursor, end: end, value: part.value, source: source,
                                 daysAfterOrigin: Int32(clamping: part.day.dayNumber - firstDay.dayNumber),
                                 metadataDigest: s.metadataDigest, creation: Interval.creation(s.created, partEnd: end))))
            cursor = end
        }
        return out
    }

    /// Counts (or, `by` -1, counts off) each entry of a record's metadata.
    /// Consecutive records mostly repeat a few entries (a Watch's heart rate, each with its motion
    /// context): those are counted in a short list compared without hashing, and go into
    /// `pendingMetadata` when they leave it (hashing three strings a sample cost a rebuild 20 %).
    private mutating func tally(_ metadata: RecordMetadata, by change: Int64) {
        for entry in metadata.entries {
            let key = MetadataKey(type: metadata.type, key: entry.key, value: entry.value, day: metadata.day.dayNumber,
                                  category: metadata.category)
            if let i = metadataRuns.firstIndex(where: { $0.key == key }) {
                metadataRuns[i].change += change
                continue
            }
            if metadataRuns.count == Self.openRunLimit {
                let oldest = metadataRuns.removeFirst()
                pendingMetadata[oldest.key, default: 0] += oldest.change
            }
            metadataRuns.append((key, change))
        }
    }

    /// Takes a replaced sample's contribution out: its intervals (or its share of a discrete
    /// day's count and sum), its count for `types`, its metadata, and remembers its event for
    /// exports.
    private mutating func withdraw(_ w: Withdrawal) throws {
        if let metadata = w.metadata { tally(metadata, by: -1) }
        let remember = try db.prepare("""
            INSERT INTO superseded(content_hash, category, day, count) VALUES (?, ?, ?, 1)
            ON CONFLICT(content_hash, category, day) DO UPDATE SET count = count + 1
            """)
        try remember.bind(1, w.contentHash)
        try remember.bind(2, w.category.rawValue)
        try remember.bind(3, w.day.dayNumber)
        try remember.run()
        if let s = w.cumulative {
            let metric = try metricID(s.metric, unit: s.unit, cumulative: true)
            let source = try sources.id(for: s.source, counting: false)
            sources.uncount(source)
            try uncountMetric(metric, identifier: s.metric, unit: s.unit, day: w.day.dayNumber)
            for (key, interval) in Self.intervals(of: s, metric: metric, source: source) {
                pendingRemovals[key, default: []].append(interval)
            }
        } else if let s = w.discrete {
            let metric = try metricID(s.metric, unit: s.unit, cumulative: false)
            let day = LocalDay(instant: s.start, utcOffset: s.utcOffset).dayNumber
            try uncountMetric(metric, identifier: s.metric, unit: s.unit, day: day)
            var removal = DiscreteStats()
            removal.add(s)
            // Count and sum come out here; the minimum and maximum need the day's readings, which
            // the caller gives to `restateDiscreteDays`.
            pendingDiscrete[DayKey(metric: metric, day: day), default: DiscreteStats()]
                .add(microSum: -removal.microSum, samples: -1, min: .infinity, max: -.infinity)
            discreteWithdrawn[DayKey(metric: metric, day: day)] = MetricKey(identifier: s.metric, unit: s.unit)
        }
    }

    /// Restates the discrete metric-days that replaced samples left, from the readings `values`
    /// gives for each (metric, unit, day): count, exact sum, minimum and maximum, as if the
    /// replaced readings had never come.
    public mutating func restateDiscreteDays(_ values: (_ metric: String, _ unit: String, _ day: LocalDay) throws -> [Double]) throws {
        guard !discreteWithdrawn.isEmpty else { return }
        try flush()
        let write = try db.prepare("INSERT OR REPLACE INTO daily(metric_id, day, samples, micro_sum, min, max) VALUES (?, ?, ?, ?, ?, ?)")
        let delete = try db.prepare("DELETE FROM daily WHERE metric_id = ? AND day = ?")
        for (key, metric) in discreteWithdrawn {
            var stats = DiscreteStats()
            for value in try values(metric.identifier, metric.unit, LocalDay(dayNumber: key.day)) {
                stats.add(DiscreteSample(metric: metric.identifier, unit: metric.unit, start: 0, utcOffset: 0, value: value))
            }
            try store(stats, of: key, write: write, delete: delete)
        }
        discreteWithdrawn = [:]
    }

    /// Writes a discrete metric-day's figures, or deletes its row when no sample is left.
    private func store(_ stats: DiscreteStats, of key: DayKey, write: SQLiteStatement, delete: SQLiteStatement) throws {
        if stats.samples <= 0 {
            try delete.bind(1, key.metric)
            try delete.bind(2, key.day)
            try delete.run()
            return
        }
        try write.bind(1, key.metric)
        try write.bind(2, key.day)
        try write.bind(3, stats.samples)
        try write.bind(4, stats.microSum)
        try write.bind(5, stats.min)
        try write.bind(6, stats.max)
        try write.run()
    }

    private mutating func uncountMetric(_ metric: Int64, identifier: String, unit: String, day: Int64) throws {
        endHeldRuns()
        let held = try heldTypes.id(type: identifier, unit: unit, category: HealthCategory.of(type: identifier))
        pendingHeld[DayKey(metric: held, day: day), default: HeldTypeTable.Tally()].add(count: -1, minutes: 0)
    }

    /// Counts one record (and how long it lasted) for `types`.
    private mutating func count(_ item: RecordedItem) throws {
        let held = try heldTypes.id(type: item.type, unit: item.unit ?? "", category: item.category)
        pendingHeld[DayKey(metric: held, day: item.day?.dayNumber ?? HeldTypeTable.undatedDay), default: HeldTypeTable.Tally()]
            .add(count: 1, minutes: item.minutes)
    }

    /// Removes what the samples of one category that started in one month brought: their
    /// intervals (later parts across the month's end too) and the totals recomputed without them,
    /// their discrete days, and for activity the stand hours and Apple's summaries of the month.
    /// The result is what a rebuild without those samples gives.
    private mutating func purge(_ erased: ErasedMonth) throws {
        guard let month = erased.month else { return }
        let first = month.days.lowerBound.dayNumber, last = month.days.upperBound.dayNumber
        let rank = sources.ranks()
        let readDays = try db.prepare("SELECT day, data FROM day_intervals WHERE metric_id = ? AND day BETWEEN ? AND ?")
        let writeIntervals = try db.prepare("UPDATE day_intervals SET data = ? WHERE metric_id = ? AND day = ?")
        let writeTotal = try db.prepare("UPDATE daily SET samples = ?, total = ? WHERE metric_id = ? AND day = ?")
        let deleteIntervals = try db.prepare("DELETE FROM day_intervals WHERE metric_id = ? AND day = ?")
        let deleteDaily = try db.prepare("DELETE FROM daily WHERE metric_id = ? AND day = ?")
        for (key, metric) in metrics where HealthCategory.of(type: key.identifier) == erased.category {
            guard metric.cumulative else {
                let remove = try db.prepare("DELETE FROM daily WHERE metric_id = ? AND day BETWEEN ? AND ?")
                try remove.bind(1, metric.id)
                try remove.bind(2, first)
                try remove.bind(3, last)
                try remove.run()
                continue
            }
            // The month's days, then the days after it for as long as a sample of the month
            // reaches into them (a sample covers every day between its first and last).
            var day = first
            while true {
                try readDays.bind(1, metric.id)
                try readDays.bind(2, day)
                try readDays.bind(3, day <= last ? last : day)
                var rows: [(day: Int64, intervals: [Interval])] = []
                while try readDays.step() {
                    var intervals: [Interval] = []
                    try IntervalBlob.decode(readDays.blob(1), into: &intervals)
                    rows.append((readDays.int64(0), intervals))
                }
                readDays.reset()
                var reachedPast = false
                for row in rows {
                    let kept = row.intervals.filter { !(first...last).contains(row.day - Int64($0.daysAfterOrigin)) }
                    guard kept.count != row.intervals.count else { continue }
                    if row.day > last { reachedPast = true }
                    for removed in row.intervals where removed.daysAfterOrigin == 0 && (first...last).contains(row.day) {
                        sources.uncount(removed.source)
                    }
                    if kept.isEmpty {
                        for statement in [deleteIntervals, deleteDaily] {
                            try statement.bind(1, metric.id)
                            try statement.bind(2, row.day)
                            try statement.run()
                        }
                    } else {
                        try writeIntervals.bind(1, IntervalBlob.encode(kept))
                        try writeIntervals.bind(2, metric.id)
                        try writeIntervals.bind(3, row.day)
                        try writeIntervals.run()
                        try writeTotal.bind(1, Int64(kept.count))
                        try writeTotal.bind(2, Deduplication.total(kept, rank: { rank[Int($0)] }))
                        try writeTotal.bind(3, metric.id)
                        try writeTotal.bind(4, row.day)
                        try writeTotal.run()
                    }
                }
                if day <= last {
                    day = last + 1
                } else if reachedPast {
                    day += 1
                } else {
                    break
                }
            }
        }
        if erased.category == .sleep {
            let removed = try db.prepare("SELECT source_id FROM sleep_segments WHERE start_day BETWEEN ? AND ?")
            try removed.bind(1, first)
            try removed.bind(2, last)
            while try removed.step() { sources.uncount(Int32(removed.int64(0))) }
            try deleteRows(of: "sleep_segments", where: "start_day", from: first, to: last)
        }
        if erased.category == .workouts { try deleteRows(of: "workouts", where: "day", from: first, to: last) }
        for table in ["superseded", "record_metadata"] {
            let forget = try db.prepare("DELETE FROM \(table) WHERE category = ? AND day BETWEEN ? AND ?")
            try forget.bind(1, erased.category.rawValue)
            try forget.bind(2, first)
            try forget.bind(3, last)
            try forget.run()
        }
        if erased.category == HealthCategory.of(type: ProjectionInput.standHourType) {
            for table in ["stand_hours", "apple_rings"] { try deleteRows(of: table, where: "day", from: first, to: last) }
        }
        ringsChanged(first)
    }

    /// Drops the metrics no day counts any more (names an erasure took with it) from the table and
    /// from this update's ids, as a rebuild would never have made them.
    private mutating func removeUnusedMetrics() throws {
        let unused = try db.prepare("""
            SELECT id FROM metrics WHERE NOT EXISTS (SELECT 1 FROM daily WHERE metric_id = metrics.id)
                AND NOT EXISTS (SELECT 1 FROM day_intervals WHERE metric_id = metrics.id)
            """)
        var ids: Set<Int64> = []
        while try unused.step() { ids.insert(unused.int64(0)) }
        guard !ids.isEmpty else { return }
        let remove = try db.prepare("DELETE FROM metrics WHERE id = ?")
        for id in ids {
            try remove.bind(1, id)
            try remove.run()
        }
        metrics = metrics.filter { !ids.contains($0.value.id) }
    }

    /// Deletes the rows of `table` whose day `column` lies in `first...last`.
    private func deleteRows(of table: String, where column: String, from first: Int64, to last: Int64) throws {
        let remove = try db.prepare("DELETE FROM \(table) WHERE \(column) BETWEEN ? AND ?")
        try remove.bind(1, first)
        try remove.bind(2, last)
        try remove.run()
    }

    private mutating func ringsChanged(_ day: Int64) {
        ringsChangedFrom = min(ringsChangedFrom ?? day, day)
    }

    /// The ids of the metrics the move and exercise rings total (those the read models have).
    private mutating func lookUpRingMetricIDs() throws -> Set<Int64> {
        var ids = Set<Int64>()
        let statement = try db.prepare("SELECT id FROM metrics WHERE identifier = ? AND unit = ?")
        for ring in [Ring.move, .exercise] {
            guard let metric = ring.metric else { continue }
            try statement.bind(1, metric)
            try statement.bind(2, ring.unit)
            if try statement.step() { ids.insert(statement.int64(0)) }
            statement.reset()
        }
        // A metric made later in this update is not in the table yet: look again next time.
        if ids.count == 2 { ringMetricIDs = ids }
        return ids
    }

    private mutating func metricID(_ identifier: String, unit: String, cumulative: Bool) throws -> Int64 {
        try recentMetrics.value(for: identifier, unit) { identifier, unit in try lookUpMetricID(identifier, unit: unit, cumulative: cumulative) }
    }

    private mutating func lookUpMetricID(_ identifier: String, unit: String, cumulative: Bool) throws -> Int64 {
        let key = MetricKey(identifier: identifier, unit: unit)
        if let known = metrics[key] { return known.id }
        let statement = try db.prepare("INSERT INTO metrics(identifier, unit, cumulative) VALUES (?, ?, ?)")
        try statement.bind(1, identifier)
        try statement.bind(2, unit)
        try statement.bind(3, Int64(cumulative ? 1 : 0))
        try statement.run()
        let id = db.lastInsertRowID
        metrics[key] = (id, cumulative)
        return id
    }

    /// Merges what is pending into the stored days.
    mutating func flush() throws {
        endIntervalRuns()
        endDiscreteRuns()
        let rank = sources.ranks()
        let readIntervals = try db.prepare("SELECT data FROM day_intervals WHERE metric_id = ? AND day = ?")
        let writeIntervals = try db.prepare("INSERT OR REPLACE INTO day_intervals(metric_id, day, data) VALUES (?, ?, ?)")
        let writeTotal = try db.prepare("INSERT OR REPLACE INTO daily(metric_id, day, samples, total) VALUES (?, ?, ?, ?)")
        let deleteIntervals = try db.prepare("DELETE FROM day_intervals WHERE metric_id = ? AND day = ?")
        let deleteDaily = try db.prepare("DELETE FROM daily WHERE metric_id = ? AND day = ?")
        let ringMetrics = try ringMetricIDs ?? lookUpRingMetricIDs()
        for key in Set(pendingIntervals.keys).union(pendingRemovals.keys) {
            if ringMetrics.contains(key.metric) { ringDaysChanged.insert(key.day) }
            var intervals: [Interval] = []
            try readIntervals.bind(1, key.metric)
            try readIntervals.bind(2, key.day)
            if try readIntervals.step() { try IntervalBlob.decode(readIntervals.blob(0), into: &intervals) }
            readIntervals.reset()
            rewrittenCopiesAdded -= RewrittenCopies.excess(intervals)
            intervals.append(contentsOf: pendingIntervals[key] ?? [])
            for removed in pendingRemovals[key] ?? [] {
                if let at = intervals.firstIndex(of: removed) { intervals.remove(at: at) }
            }
            if intervals.isEmpty {
                for statement in [deleteIntervals, deleteDaily] {
                    try statement.bind(1, key.metric)
                    try statement.bind(2, key.day)
                    try statement.run()
                }
                continue
            }
            intervals.sort(by: Interval.precedes)
            rewrittenCopiesAdded += RewrittenCopies.excess(intervals)
            try writeIntervals.bind(1, key.metric)
            try writeIntervals.bind(2, key.day)
            try writeIntervals.bind(3, IntervalBlob.encode(intervals))
            try writeIntervals.run()
            try writeTotal.bind(1, key.metric)
            try writeTotal.bind(2, key.day)
            try writeTotal.bind(3, Int64(intervals.count))
            try writeTotal.bind(4, Deduplication.total(intervals, rank: { rank[Int($0)] }))
            try writeTotal.run()
        }
        pendingIntervals = [:]
        pendingRemovals = [:]

        let readStats = try db.prepare("SELECT samples, micro_sum, min, max FROM daily WHERE metric_id = ? AND day = ?")
        let writeStats = try db.prepare("INSERT OR REPLACE INTO daily(metric_id, day, samples, micro_sum, min, max) VALUES (?, ?, ?, ?, ?, ?)")
        for (key, added) in pendingDiscrete {
            var stats = DiscreteStats()
            try readStats.bind(1, key.metric)
            try readStats.bind(2, key.day)
            if try readStats.step() {
                stats.add(microSum: readStats.int64(1), samples: readStats.int64(0), min: readStats.double(2), max: readStats.double(3))
            }
            readStats.reset()
            stats.add(microSum: added.microSum, samples: added.samples, min: added.min, max: added.max)
            try store(stats, of: key, write: writeStats, delete: deleteDaily)
        }
        pendingDiscrete = [:]

        let readStand = try db.prepare("SELECT data FROM stand_hours WHERE day = ?")
        let writeStand = try db.prepare("INSERT OR REPLACE INTO stand_hours(day, hours, data) VALUES (?, ?, ?)")
        for (day, added) in pendingStand {
            var hours = added
            try readStand.bind(1, day)
            if try readStand.step() { hours.formUnion(try HourBlob.decode(readStand.blob(0))) }
            readStand.reset()
            try writeStand.bind(1, day)
            try writeStand.bind(2, Int64(hours.count))
            try writeStand.bind(3, HourBlob.encode(hours))
            try writeStand.run()
        }
        pendingStand = [:]

        let writeApple = try db.prepare("""
            INSERT OR REPLACE INTO apple_rings(day, move, move_goal, exercise, exercise_goal, stand, stand_goal)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """)
        for (day, r) in pendingAppleRings {
            try writeApple.bind(1, day)
            for (i, v) in [r.move, r.moveGoal, r.exercise, r.exerciseGoal, r.stand, r.standGoal].enumerated() {
                try writeApple.bind(Int32(i + 2), v)
            }
            try writeApple.run()
        }
        pendingAppleRings = [:]
        try flushMetadata()
        endHeldRuns()
        try heldTypes.add(pendingHeld)
        pendingHeld = [:]
        try sources.saveSampleCounts()
        pendingCount = 0
    }

    private mutating func flushMetadata() throws {
        for run in metadataRuns { pendingMetadata[run.key, default: 0] += run.change }
        metadataRuns = []
        guard !pendingMetadata.isEmpty else { return }
        let upsert = try db.prepare("""
            INSERT INTO record_metadata(type, key, value, day, records, category) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT(type, key, value, day) DO UPDATE SET records = records + excluded.records
            """)
        let dropEmpty = try db.prepare("DELETE FROM record_metadata WHERE type = ? AND key = ? AND value = ? AND day = ? AND records <= 0")
        for (key, change) in pendingMetadata where change != 0 {
            try upsert.bind(1, key.type)
            try upsert.bind(2, key.key)
            try upsert.bind(3, key.value)
            try upsert.bind(4, key.day)
            try upsert.bind(5, change)
            try upsert.bind(6, key.category.rawValue)
            try upsert.run()
            if change < 0 {
                try dropEmpty.bind(1, key.type)
                try dropEmpty.bind(2, key.key)
                try dropEmpty.bind(3, key.value)
                try dropEmpty.bind(4, key.day)
                try dropEmpty.run()
            }
        }
        pendingMetadata = [:]
    }

    /// Flushes, recomputes what depends on everything (source ranks, rings), and ends.
    mutating func finish() throws {
        try flush()
        if orderChanged {
            try recomputeAllCumulativeTotals()
            try RingTable.refresh(db)
        } else {
            // The days alone first: they lie before any carried-forward refresh, which then
            // starts from the rows they leave, as a refresh of everything would.
            let alone = ringDaysChanged.filter { day in ringsChangedFrom.map { day < $0 } ?? true }
            if !alone.isEmpty { try RingTable.refresh(db, days: alone) }
            if let ringsChangedFrom { try RingTable.refresh(db, from: ringsChangedFrom) }
        }
    }

    /// After the source order changed, every day's totals are recomputed with the new ranks.
    private func recomputeAllCumulativeTotals() throws {
        let rank = sources.ranks()
        let all = try db.prepare("SELECT metric_id, day, data FROM day_intervals")
        let writeTotal = try db.prepare("UPDATE daily SET total = ? WHERE metric_id = ? AND day = ?")
        while try all.step() {
            var intervals: [Interval] = []
            try IntervalBlob.decode(all.blob(2), into: &intervals)
            try writeTotal.bind(1, Deduplication.total(intervals, rank: { rank[Int($0)] }))
            try writeTotal.bind(2, all.int64(0))
            try writeTotal.bind(3, all.int64(1))
            try writeTotal.run()
        }
    }
}

@available(*, unavailable)
extension ProjectionUpdate: Sendable {}

/// Stand hours of a day: format byte 1, then the hour numbers (hours since 1970, UTC) that had a
/// "stood" record, 8 bytes little-endian each, ascending.
enum HourBlob {
    static func encode(_ hours: Set<Int64>) -> [UInt8] {
        var out: [UInt8] = [1]
        for h in hours.sorted() {
            for k in 0..<8 { out.append(UInt8(truncatingIfNeeded: UInt64(bitPattern: h) >> (8 * UInt64(k)))) }
        }
        return out
    }

    static func decode(_ bytes: [UInt8]) throws -> Set<Int64> {
        guard let first = bytes.first else { return [] }
        guard first == 1, (bytes.count - 1) % 8 == 0 else { throw ProjectionError.corruptBlob(table: "stand_hours") }
        var hours = Set<Int64>()
        var p = 1
        while p < bytes.count {
            var v: UInt64 = 0
            for k in 0..<8 { v |= UInt64(bytes[p + k]) << (8 * UInt64(k)) }
            hours.insert(Int64(bitPattern: v))
            p += 8
        }
        return hours
    }
}
