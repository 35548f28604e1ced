import HealthModel

extension ReadModels {
    /// Rings per day from `from` to `to` (inclusive, either open).
    public func rings(from: LocalDay? = nil, to: LocalDay? = nil) throws -> [RingDay] {
        let statement = try db.prepare("""
            SELECT r.day, r.move, r.move_goal, r.exercise, r.exercise_goal, r.stand, r.stand_goal,
                   a.day, a.move, a.move_goal, a.exercise, a.exercise_goal, a.stand, a.stand_goal
            FROM rings r LEFT JOIN apple_rings a ON a.day = r.day
            WHERE r.day BETWEEN ? AND ? ORDER BY r.day
            """)
        try statement.bind(1, from?.dayNumber ?? Int64.min)
        try statement.bind(2, to?.dayNumber ?? Int64.max)
        var result: [RingDay] = []
        while try statement.step() {
            let day = LocalDay(dayNumber: statement.int64(0))
            let apple = statement.isNull(7) ? nil : AppleRings(
                day: day, move: statement.optionalDouble(8), moveGoal: statement.optionalDouble(9),
                exercise: statement.optionalDouble(10), exerciseGoal: statement.optionalDouble(11),
                stand: statement.optionalDouble(12), standGoal: statement.optionalDouble(13))
            result.append(RingDay(
                day: day, move: statement.double(1), moveGoal: statement.double(2), exercise: statement.double(3),
                exerciseGoal: statement.double(4), stand: Int(statement.int64(5)), standGoal: statement.double(6), apple: apple))
        }
        return result
    }

    /// Per-period figures of a metric (a HealthKit identifier), in every unit it was recorded in.
    /// Category types give minutes per period when their records last (mindful sessions; sleep:
    /// minutes asleep per night, by the night's day), counts when they do not (stand hours: hours
    /// stood).
    public func summary(metric: String, by period: SummaryPeriod, from: LocalDay? = nil, to: LocalDay? = nil) throws -> [SummaryRow] {
        switch metric {
        case ProjectionInput.sleepType:
            let nights = try sleep(from: from, to: to)
            return Self.sums(nights.map { ($0.night, $0.asleep, 1) }, by: period, rangeEnd: to ?? nights.last?.night, unit: "min")
        case ProjectionInput.standHourType:
            let statement = try db.prepare("SELECT day, hours FROM stand_hours WHERE day BETWEEN ? AND ? ORDER BY day")
            try statement.bind(1, from?.dayNumber ?? Int64.min)
            try statement.bind(2, to?.dayNumber ?? Int64.max)
            var days: [(LocalDay, Double, Int)] = []
            while try statement.step() { days.append((LocalDay(dayNumber: statement.int64(0)), Double(statement.int64(1)), 1)) }
            return Self.sums(days, by: period, rangeEnd: to ?? days.last?.0, unit: "count")
        default:
            let quantities = try quantitySummary(metric: metric, by: period, from: from, to: to)
            return quantities.isEmpty ? try categorySummary(type: metric, by: period, from: from, to: to) : quantities
        }
    }

    /// Minutes (or counts, for records that do not last) of a category type per period.
    private func categorySummary(type: String, by period: SummaryPeriod, from: LocalDay?, to: LocalDay?) throws -> [SummaryRow] {
        let statement = try db.prepare("""
            SELECT d.day, d.count, d.minutes FROM held_days d JOIN held_types t ON t.id = d.type_id
            WHERE t.type = ? AND t.unit = '' AND d.day BETWEEN ? AND ? ORDER BY d.day
            """)
        try statement.bind(1, type)
        try statement.bind(2, from?.dayNumber ?? Int64.min)
        try statement.bind(3, to?.dayNumber ?? Int64.max)
        var days: [(day: LocalDay, count: Int, minutes: Double)] = []
        while try statement.step() { days.append((LocalDay(dayNumber: statement.int64(0)), Int(statement.int64(1)), statement.double(2))) }
        let lasts = days.contains { $0.minutes > 0 }
        return Self.sums(days.map { ($0.day, lasts ? $0.minutes : Double($0.count), $0.count) }, by: period,
                         rangeEnd: to ?? days.last?.day, unit: lasts ? "min" : "count")
    }

    /// Sums of per-day values (with how many records each holds) per period.
    private static func sums(_ days: [(LocalDay, Double, Int)], by period: SummaryPeriod, rangeEnd: LocalDay?, unit: String) -> [SummaryRow] {
        var rows: [SummaryRow] = []
        for (day, value, samples) in days {
            let key = period.key(of: day, rangeEnd: rangeEnd ?? day)
            if rows.last?.period == key {
                rows[rows.count - 1].value += value
                rows[rows.count - 1].samples += samples
            } else {
                rows.append(SummaryRow(period: key, value: value, unit: unit, samples: samples, min: nil, max: nil))
            }
        }
        return rows
    }

    /// Nights from `from` to `to` (by the day each night ends), with minutes per stage.
    public func sleep(from: LocalDay? = nil, to: LocalDay? = nil) throws -> [SleepNight] {
        let table = try SourceTable(db: db)
        let rank = table.ranks()
        let statement = try db.prepare("""
            SELECT night, start, start_offset, end, end_offset, stage, source_id FROM sleep_segments
            WHERE night BETWEEN ? AND ? ORDER BY night, start, end, stage, source_id
            """)
        try statement.bind(1, from?.dayNumber ?? Int64.min)
        try statement.bind(2, to?.dayNumber ?? Int64.max)
        var nights: [SleepNight] = []
        var current: (night: Int64, segments: [(segment: SleepSegment, source: Int32)])?
        func close() {
            guard let c = current else { return }
            nights.append(SleepFigures.night(LocalDay(dayNumber: c.night), c.segments, rank: { rank[Int($0)] },
                                             names: { table.keys[$0]?.name ?? "" }))
        }
        while try statement.step() {
            let night = statement.int64(0)
            if current?.night != night {
                close()
                current = (night, [])
            }
            let source = Int32(statement.int64(6))
            let segment = SleepSegment(
                start: HealthTimestamp(seconds: statement.int64(1), utcOffset: Int32(statement.int64(2))),
                end: HealthTimestamp(seconds: statement.int64(3), utcOffset: Int32(statement.int64(4))),
                stage: SleepStage(rawValue: Int(statement.int64(5))) ?? .asleepUnspecified,
                source: table.keys[source] ?? SourceKey(name: "", deviceClass: .other))
            current!.segments.append((segment, source))
        }
        close()
        return nights
    }

    private func quantitySummary(metric: String, by period: SummaryPeriod, from: LocalDay?, to: LocalDay?) throws -> [SummaryRow] {
        let statement = try db.prepare("""
            SELECT d.day, m.unit, m.cumulative, d.samples, d.total, d.micro_sum, d.min, d.max
            FROM daily d JOIN metrics m ON m.id = d.metric_id
            WHERE m.identifier = ? AND d.day BETWEEN ? AND ? ORDER BY d.day, m.unit
            """)
        try statement.bind(1, metric)
        try statement.bind(2, from?.dayNumber ?? Int64.min)
        try statement.bind(3, to?.dayNumber ?? Int64.max)
        // Only two-week periods depend on where the range ends.
        let rangeEnd = try to ?? (period == .twoWeeks
            ? lastDay("SELECT MAX(d.day) FROM daily d JOIN metrics m ON m.id = d.metric_id WHERE m.identifier = ?", metric) : LocalDay(dayNumber: 0))
        struct Accumulator {
            var total = 0.0, microSum = 0.0, samples = 0, min = Double.infinity, max = -Double.infinity
            var cumulative = true
        }
        var order: [(String, String)] = []
        var groups: [String: [String: Accumulator]] = [:]
        while try statement.step() {
            let key = period.key(of: LocalDay(dayNumber: statement.int64(0)), rangeEnd: rangeEnd)
            let unit = statement.text(1) ?? ""
            if groups[key]?[unit] == nil { order.append((key, unit)) }
            var a = groups[key]?[unit] ?? Accumulator()
            a.cumulative = statement.int64(2) != 0
            a.samples += Int(statement.int64(3))
            if a.cumulative {
                a.total += statement.double(4)
            } else {
                a.microSum += Double(statement.int64(5))
                a.min = Swift.min(a.min, statement.double(6))
                a.max = Swift.max(a.max, statement.double(7))
            }
            groups[key, default: [:]][unit] = a
        }
        return order.map { key, unit in
            let a = groups[key]![unit]!
            if a.cumulative {
                return SummaryRow(period: key, value: a.total, unit: unit, samples: a.samples, min: nil, max: nil)
            }
            return SummaryRow(period: key, value: a.microSum / 1e6 / Double(max(a.samples, 1)), unit: unit,
                              samples: a.samples, min: a.min, max: a.max)
        }
    }

    /// The last day a query over all days gives (`SELECT MAX(day) ... WHERE x = ?`), the end of
    /// a range without one; any day when there is none (nothing is grouped then).
    private func lastDay(_ sql: String, _ argument: String?) throws -> LocalDay {
        let statement = try db.prepare(sql)
        if let argument { try statement.bind(1, argument) }
        return try statement.step() && !statement.isNull(0) ? LocalDay(dayNumber: statement.int64(0)) : LocalDay(dayNumber: 0)
    }

    /// Workouts per period and activity type, from `from` to `to` (inclusive, either open).
    /// The same workout from two sources counts once (`WorkoutDeduplication`).
    public func workouts(by period: SummaryPeriod, from: LocalDay? = nil, to: LocalDay? = nil) throws -> [WorkoutRow] {
        let counted = try countedWorkouts(from: from, to: to).sorted { ($0.day, $0.start, $0.type) < ($1.day, $1.start, $1.type) }
        let rangeEnd = to ?? (period == .twoWeeks ? counted.map(\.day).max().map { LocalDay(dayNumber: $0) } ?? LocalDay(dayNumber: 0) : LocalDay(dayNumber: 0))
        var rows: [WorkoutRow] = []
        var index: [String: Int] = [:]
        for workout in counted {
            let period = period.key(of: LocalDay(dayNumber: workout.day), rangeEnd: rangeEnd)
            let key = period + "\u{0}" + workout.type
            if index[key] == nil {
                index[key] = rows.count
                rows.append(WorkoutRow(period: period, type: workout.type, count: 0, minutes: 0, energy: 0, distance: 0))
            }
            let i = index[key]!
            rows[i].count += 1
            rows[i].minutes += workout.minutes
            rows[i].energy += workout.energy ?? 0
            rows[i].distance += workout.distance ?? 0
        }
        return rows
    }

    /// Current and longest streaks per ring and for all three.
    public func streaks() throws -> Streaks {
        Streaks(days: try rings())
    }

    /// Whether any ring goal is known: one the person set, or one of Apple's daily summaries
    /// (whose goal 0 says none). Without one, the rings use `Ring.defaultGoal`.
    public func goalsKnown() throws -> Bool {
        let statement = try db.prepare("""
            SELECT EXISTS (SELECT 1 FROM goal_changes)
                OR EXISTS (SELECT 1 FROM apple_rings WHERE move_goal > 0 OR exercise_goal > 0 OR stand_goal > 0)
            """)
        return try statement.step() && statement.int64(0) != 0
    }

    /// Goals the person set, in the order they were set.
    public func goalChanges() throws -> [GoalChange] {
        let statement = try db.prepare("SELECT ring, value, from_day FROM goal_changes ORDER BY id")
        var result: [GoalChange] = []
        while try statement.step() {
            guard let ring = Ring(rawValue: statement.text(0) ?? "") else { continue }
            result.append(GoalChange(ring: ring, value: statement.double(1), from: LocalDay(dayNumber: statement.int64(2))))
        }
        return result
    }

    /// The metrics (HealthKit identifiers) that have figures, with their units.
    public func metrics() throws -> [(identifier: String, unit: String, cumulative: Bool)] {
        let statement = try db.prepare("SELECT identifier, unit, cumulative FROM metrics ORDER BY identifier, unit")
        var result: [(identifier: String, unit: String, cumulative: Bool)] = []
        while try statement.step() { result.append((statement.text(0) ?? "", statement.text(1) ?? "", statement.int64(2) != 0)) }
        return result
    }

    /// How many samples of each content (`Withdrawal.contentHash`) re-posted values replaced
    /// (companion upserts): exports leave out that many of the first samples with that content.
    public func supersededSamples() throws -> [Int64: Int] {
        let statement = try db.prepare("SELECT content_hash, SUM(count) FROM superseded GROUP BY content_hash")
        var result: [Int64: Int] = [:]
        while try statement.step() { result[statement.int64(0)] = Int(statement.int64(1)) }
        return result
    }

    /// Every type the vault holds (and unit it is read in), with its count and first and last
    /// local day, by category, then type.
    public func heldTypes() throws -> [HeldTypeRow] {
        let statement = try db.prepare("""
            SELECT t.type, t.unit, t.category, t.undated + COALESCE(SUM(d.count), 0), MIN(d.day), MAX(d.day)
            FROM held_types t LEFT JOIN held_days d ON d.type_id = t.id
            GROUP BY t.id ORDER BY t.category, t.type, t.unit
            """)
        var rows: [HeldTypeRow] = []
        while try statement.step() {
            rows.append(HeldTypeRow(
                type: statement.text(0) ?? "", unit: (statement.text(1) ?? "").isEmpty ? nil : statement.text(1),
                category: HealthCategory(rawValue: statement.text(2) ?? "") ?? .other, count: Int(statement.int64(3)),
                first: statement.isNull(4) ? nil : LocalDay(dayNumber: statement.int64(4)),
                last: statement.isNull(5) ? nil : LocalDay(dayNumber: statement.int64(5))))
        }
        return rows
    }

    /// Every source, in the order that decides which counts.
    public func sources() throws -> [SourceRow] {
        let table = try SourceTable(db: db)
        let rank = table.ranks()
        var ordered = Set<Int64>()
        let order = try db.prepare("SELECT source_id FROM source_order")
        while try order.step() { ordered.insert(order.int64(0)) }
        let statement = try db.prepare("SELECT id, samples FROM sources")
        var rows: [SourceRow] = []
        while try statement.step() {
            let id = statement.int64(0)
            guard let key = table.keys[Int32(id)] else { continue }
            rows.append(SourceRow(rank: rank[Int(id)] + 1, key: key, samples: Int(statement.int64(1)), ordered: ordered.contains(id)))
        }
        return rows.sorted { $0.rank < $1.rank }
    }

    /// Runs one read-only statement over the read models (tables in docs/projections.md).
    public func query(_ sql: String) throws -> SQLResult {
        // ATTACH and DETACH count as read-only to SQLite but would create files: only statements
        // that start as queries do are let through, one at a time.
        let firstWord = sql.drop { $0.isWhitespace }.prefix { $0.isLetter }.uppercased()
        guard ["SELECT", "WITH", "VALUES", "EXPLAIN", "PRAGMA"].contains(firstWord) else { throw ProjectionError.notReadOnly }
        let statement = try db.prepare(sql)
        guard statement.isReadOnly else { throw ProjectionError.notReadOnly }
        guard !statement.hasTail else { throw ProjectionError.multipleStatements }
        let columns = (0..<statement.columnCount).map(statement.columnName)
        var rows: [[SQLValue]] = []
        while try statement.step() {
            rows.append((0..<columns.count).map(statement.value))
        }
        return SQLResult(columns: columns, rows: rows)
    }
}
