import HealthModel

/// What leaves the read models: a replaced sample (a companion upsert), an erased category-month,
/// and the discrete days they leave to restate from the log.
extension ProjectionUpdate {
    /// Takes a replaced sample's contribution out: its intervals (or its share of a discrete
    /// day's count and sum), its count for `types`, its metadata, and remembers its event for
    /// exports.
    mutating func withdraw(_ w: Withdrawal) throws {
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
    func store(_ stats: DiscreteStats, of key: DayKey, write: SQLiteStatement, delete: SQLiteStatement) throws {
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

    mutating func uncountMetric(_ metric: Int64, identifier: String, unit: String, day: Int64) throws {
        endHeldRuns()
        let held = try heldTypes.id(type: identifier, unit: unit, category: HealthCategory.of(type: identifier))
        pendingHeld[DayKey(metric: held, day: day), default: HeldTypeTable.Tally()].add(count: -1, minutes: 0)
    }

    /// Removes what the samples of one category that started in one month brought: their
    /// intervals (later parts across the month's end too) and the totals recomputed without them,
    /// their discrete days, and for activity the stand hours and Apple's summaries of the month.
    /// The result is what a rebuild without those samples gives.
    mutating func purge(_ erased: ErasedMonth) throws {
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
        if erased.category == .workouts {
            for table in ["workouts", "practices"] { try deleteRows(of: table, where: "day", from: first, to: last) }
        }
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
    mutating func removeUnusedMetrics() throws {
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
    func deleteRows(of table: String, where column: String, from first: Int64, to last: Int64) throws {
        let remove = try db.prepare("DELETE FROM \(table) WHERE \(column) BETWEEN ? AND ?")
        try remove.bind(1, first)
        try remove.bind(2, last)
        try remove.run()
    }
}
