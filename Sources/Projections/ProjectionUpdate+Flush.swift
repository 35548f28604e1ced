import HealthModel

/// Merging what an update gathered into the stored days, and the figures that depend on them all
/// (source ranks, rings) at its end.
extension ProjectionUpdate {
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
            let rewritesBefore = RewrittenCopies.excess(intervals)
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
            // What the day gained (a replaced copy going does not offset a rewrite coming).
            rewrittenCopiesAdded += max(0, RewrittenCopies.excess(intervals) - rewritesBefore)
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

    mutating func flushMetadata() throws {
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
    func recomputeAllCumulativeTotals() throws {
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
