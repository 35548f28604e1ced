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
    var intervalRuns: [(key: DayKey, intervals: [Interval])] = []
    /// Intervals of replaced samples, taken out of their days at the next flush.
    var pendingRemovals: [DayKey: [Interval]] = [:]
    /// Discrete metric-days a replaced sample left: their minimum and maximum are restated from
    /// the day's readings (`restateDiscreteDays`).
    var discreteWithdrawn: [DayKey: MetricKey] = [:]
    var pendingDiscrete: [DayKey: DiscreteStats] = [:]
    /// Open runs of discrete metric-days' stats, as `intervalRuns`.
    var discreteRuns: [(key: DayKey, stats: DiscreteStats)] = []
    var pendingStand: [Int64: Set<Int64>] = [:]
    var pendingAppleRings: [Int64: AppleRings] = [:]
    /// What `types` counts: held type ids by type and unit, and counts per type and day pending
    /// (day `undatedDay` for undated records).
    var heldTypes: HeldTypeTable
    var pendingHeld: [DayKey: HeldTypeTable.Tally] = [:]
    /// The held type of each metric id, so a quantity sample finds its type without hashing.
    var heldTypeOfMetric: [Int64: Int64] = [:]
    /// Open runs of quantity samples counted per metric and day (with the metric's held type),
    /// as `intervalRuns`: added to `pendingHeld` when a metric's day changes, not hashed one by
    /// one.
    var heldRuns: [(metric: Int64, day: Int64, held: Int64, count: Int64)] = []
    /// How many metrics may have open runs at once (an export interleaves a handful of types).
    static let openRunLimit = 8
    var insertSleep: SQLiteStatement?
    var insertWorkout: SQLiteStatement?
    var insertPractice: SQLiteStatement?
    var pendingCount = 0
    /// Metadata entries counted (or counted off) since the last flush.
    var pendingMetadata: [MetadataKey: Int64] = [:]
    var metadataRuns: [(key: MetadataKey, change: Int64)] = []
    struct MetadataKey: Hashable {
        var type: String
        var key: String
        var value: String
        var day: Int64
        var category: HealthCategory
    }
    /// Rewritten copies (`RewrittenCopies`) the days this update merged gained: what an import's
    /// rewrites came to.
    public internal(set) var rewrittenCopiesAdded = 0
    var orderChanged = false
    /// The metrics of the last inputs, compared before any hashing: a frame holds one category's
    /// month, a few types interleaved.
    /// Metric ids by the identifier's and unit's identity (`StringMemo`): an import's samples
    /// share their strings, so most find their metric without hashing two strings.
    let recentMetrics = StringMemo<Int64>()
    /// The first day whose goals may have changed (a goal set, Apple's summary, an erasure):
    /// its rings and every later day's are recomputed, since a day's goal carries forward. Nil
    /// when none did.
    var ringsChangedFrom: Int64?
    /// Days whose ring values alone changed (a move or exercise total, stand hours): only those
    /// days' rows are recomputed. A companion's sample used to recompute every ring from its
    /// day to the vault's last (a decade: 110 M instructions, docs/benchmarks-history.md).
    var ringDaysChanged: Set<Int64> = []
    /// The metric ids of the move and exercise rings' totals, once looked up.
    var ringMetricIDs: Set<Int64>?

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
    mutating func countMetric(_ metric: Int64, identifier: String, unit: String, day: Int64) throws {
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

    mutating func endHeldRun(at index: Int) {
        let run = heldRuns.remove(at: index)
        pendingHeld[DayKey(metric: run.held, day: run.day), default: HeldTypeTable.Tally()].add(count: run.count, minutes: 0)
    }

    mutating func endHeldRuns() {
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
            // The inner input counts toward the flush; its metadata is tallied beside it.
            try add(inner)
            tally(metadata, by: 1)
            return
        case .workout(let w):
            let day = LocalDay(instant: w.start, utcOffset: w.utcOffset)
            try count(RecordedItem(type: w.type, category: .workouts, day: day))
            if insertWorkout == nil {
                insertWorkout = try db.prepare("INSERT INTO workouts(day, start, type, minutes, energy, distance, end, source_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
            }
            let insert = insertWorkout!
            try insert.bind(1, day.dayNumber)
            try insert.bind(2, w.start)
            try insert.bind(3, w.type)
            try insert.bind(4, w.minutes)
            try insert.bind(5, w.energy)
            try insert.bind(6, w.distance)
            if let end = w.end { try insert.bind(7, end) } else { try insert.bindNull(7) }
            if let source = w.source { try insert.bind(8, Int64(try sources.id(for: source, counting: false))) } else { try insert.bindNull(8) }
            try insert.run()
        case .practice(let p):
            try count(RecordedItem(type: PracticeItem.type, category: .workouts, day: p.day))
            if insertPractice == nil {
                insertPractice = try db.prepare("""
                    INSERT INTO practices(day, at, exercise, body_parts, motion, repetitions, seconds) VALUES (?, ?, ?, ?, ?, ?, ?)
                    """)
            }
            let insert = insertPractice!
            try insert.bind(1, p.day.dayNumber)
            try insert.bind(2, p.at)
            try insert.bind(3, p.exercise)
            try insert.bind(4, p.bodyParts.map(\.rawValue).joined(separator: ","))
            try insert.bind(5, p.motion.rawValue)
            try insert.bind(6, Int64(p.repetitions))
            try insert.bind(7, p.seconds.map { Double($0) })
            try insert.run()
        }
        pendingCount += 1
        if pendingCount >= flushThreshold { try flush() }
    }

    mutating func addInterval(_ interval: Interval, to key: DayKey) {
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

    mutating func endIntervalRun(at index: Int) {
        let run = intervalRuns.remove(at: index)
        pendingIntervals[run.key, default: []].append(contentsOf: run.intervals)
    }

    mutating func endIntervalRuns() {
        while !intervalRuns.isEmpty { endIntervalRun(at: intervalRuns.count - 1) }
    }

    mutating func endDiscreteRun(at index: Int) {
        let run = discreteRuns.remove(at: index)
        pendingDiscrete[run.key, default: DiscreteStats()].add(microSum: run.stats.microSum, samples: run.stats.samples, min: run.stats.min, max: run.stats.max)
    }

    mutating func endDiscreteRuns() {
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
                                 metadataDigest: RewrittenCopies.digest(metadata: s.metadataDigest, sampleStart: s.start, sampleEnd: s.end, whole: false),
                                 creation: Interval.creation(s.created, partEnd: end))))
            cursor = end
        }
        return out
    }

    /// Counts (or, `by` -1, counts off) each entry of a record's metadata.
    /// Consecutive records mostly repeat a few entries (a Watch's heart rate, each with its motion
    /// context): those are counted in a short list compared without hashing, and go into
    /// `pendingMetadata` when they leave it (hashing three strings a sample cost a rebuild 20 %).
    mutating func tally(_ metadata: RecordMetadata, by change: Int64) {
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

    /// Counts one record (and how long it lasted) for `types`.
    mutating func count(_ item: RecordedItem) throws {
        let held = try heldTypes.id(type: item.type, unit: item.unit ?? "", category: item.category)
        pendingHeld[DayKey(metric: held, day: item.day?.dayNumber ?? HeldTypeTable.undatedDay), default: HeldTypeTable.Tally()]
            .add(count: 1, minutes: item.minutes)
    }

    mutating func ringsChanged(_ day: Int64) {
        ringsChangedFrom = min(ringsChangedFrom ?? day, day)
    }

    /// The ids of the metrics the move and exercise rings total (those the read models have).
    mutating func lookUpRingMetricIDs() throws -> Set<Int64> {
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

    mutating func metricID(_ identifier: String, unit: String, cumulative: Bool) throws -> Int64 {
        try recentMetrics.value(for: identifier, unit) { identifier, unit in try lookUpMetricID(identifier, unit: unit, cumulative: cumulative) }
    }

    mutating func lookUpMetricID(_ identifier: String, unit: String, cumulative: Bool) throws -> Int64 {
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
}

@available(*, unavailable)
extension ProjectionUpdate: Sendable {}
