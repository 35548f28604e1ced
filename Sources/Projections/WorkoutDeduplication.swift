import HealthModel

/// The same workout from two sources counts once, as the Health app shows it: a run a watch
/// recorded is imported from its FIT file and again from Apple Health, where the vendor's app
/// synced it. Two workouts are the same when they are of one activity type, come from different
/// sources, and overlap by at least half of the shorter one; the one whose source ranks first
/// (`sources`) is counted, of equal rank the one the log holds first.
enum WorkoutDeduplication {
    struct Row {
        var day: Int64
        var start: Int64
        var end: Int64
        var type: String
        var minutes: Double
        var energy: Double?
        var distance: Double?
        var sourceID: Int64?
        /// Its place in the table (the log's order).
        var order: Int64
    }

    /// The rows that count, in start order.
    static func countedOnce(_ rows: [Row], rank: (Int64?) -> Int) -> [Row] {
        var kept: [Row] = []
        for row in rows.sorted(by: { ($0.start, $0.order) < ($1.start, $1.order) }) {
            let twin = kept.indices.last { i in
                let other = kept[i]
                guard other.type == row.type, let a = other.sourceID, let b = row.sourceID, a != b else { return false }
                let overlap = min(other.end, row.end) - max(other.start, row.start)
                let shorter = min(other.end - other.start, row.end - row.start)
                return overlap > 0 && overlap * 2 >= shorter
            }
            guard let twin else {
                kept.append(row)
                continue
            }
            if (rank(row.sourceID), row.order) < (rank(kept[twin].sourceID), kept[twin].order) { kept[twin] = row }
        }
        return kept.sorted { ($0.start, $0.order) < ($1.start, $1.order) }
    }
}

extension ReadModels {
    /// Workouts from `from` to `to` (inclusive, either open), each counted once across sources.
    func countedWorkouts(from: LocalDay?, to: LocalDay?) throws -> [WorkoutDeduplication.Row] {
        let statement = try db.prepare("""
            SELECT day, start, coalesce(end, start + CAST(minutes * 60 AS INTEGER)), type, minutes, energy, distance, source_id, rowid
            FROM workouts WHERE day BETWEEN ? AND ? ORDER BY start, rowid
            """)
        try statement.bind(1, from?.dayNumber ?? Int64.min)
        try statement.bind(2, to?.dayNumber ?? Int64.max)
        var rows: [WorkoutDeduplication.Row] = []
        while try statement.step() {
            rows.append(WorkoutDeduplication.Row(day: statement.int64(0), start: statement.int64(1), end: statement.int64(2),
                                                 type: statement.text(3) ?? "", minutes: statement.double(4), energy: statement.optionalDouble(5),
                                                 distance: statement.optionalDouble(6), sourceID: statement.isNull(7) ? nil : statement.int64(7),
                                                 order: statement.int64(8)))
        }
        guard rows.contains(where: { $0.sourceID != nil }) else { return rows }
        let ranks = try SourceTable(db: db).ranks()
        return WorkoutDeduplication.countedOnce(rows) { id in id.flatMap { ranks.indices.contains(Int($0)) ? ranks[Int($0)] : nil } ?? Int.max }
    }
}
