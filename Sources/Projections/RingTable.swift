import HealthModel

/// Fills the `rings` table: one row per local day that has ring data (active energy, exercise
/// minutes, a stand-hour record or Apple's summary), with the goal in force that day.
///
/// A day's goal, per ring: the last one the person set (`goals set`) effective on or before
/// that day; else the goal in that day's imported ActivitySummary; else the goal of the latest
/// earlier day; else Apple's default.
enum RingTable {
    static func refresh(_ db: SQLiteConnection) throws {
        var days: [Int64: (move: Double, exercise: Double, stand: Int64)] = [:]
        let ringMetrics = try db.prepare("""
            SELECT d.day, m.identifier, d.total FROM daily d JOIN metrics m ON m.id = d.metric_id
            WHERE (m.identifier = ? AND m.unit = ?) OR (m.identifier = ? AND m.unit = ?)
            """)
        try ringMetrics.bind(1, Ring.move.metric!)
        try ringMetrics.bind(2, Ring.move.unit)
        try ringMetrics.bind(3, Ring.exercise.metric!)
        try ringMetrics.bind(4, Ring.exercise.unit)
        while try ringMetrics.step() {
            let day = ringMetrics.int64(0)
            if ringMetrics.text(1) == Ring.move.metric {
                days[day, default: (0, 0, 0)].move = ringMetrics.double(2)
            } else {
                days[day, default: (0, 0, 0)].exercise = ringMetrics.double(2)
            }
        }
        let stand = try db.prepare("SELECT day, hours FROM stand_hours")
        while try stand.step() { days[stand.int64(0), default: (0, 0, 0)].stand = stand.int64(1) }

        var appleGoals: [Int64: [Ring: Double]] = [:]
        let apple = try db.prepare("SELECT day, move_goal, exercise_goal, stand_goal FROM apple_rings")
        while try apple.step() {
            let day = apple.int64(0)
            if days[day] == nil { days[day] = (0, 0, 0) }
            for (i, ring) in Ring.allCases.enumerated() {
                if let goal = apple.optionalDouble(i + 1), goal > 0 { appleGoals[day, default: [:]][ring] = goal }
            }
        }

        var userGoals: [Ring: [(from: Int64, value: Double)]] = [:]
        let changes = try db.prepare("SELECT ring, value, from_day FROM goal_changes ORDER BY from_day, id")
        while try changes.step() {
            guard let ring = Ring(rawValue: changes.text(0) ?? "") else { continue }
            userGoals[ring, default: []].append((changes.int64(2), changes.double(1)))
        }

        try db.execute("DELETE FROM rings")
        let insert = try db.prepare("INSERT INTO rings(day, move, move_goal, exercise, exercise_goal, stand, stand_goal) VALUES (?, ?, ?, ?, ?, ?, ?)")
        var lastKnown: [Ring: Double] = [:]
        var nextUserGoal: [Ring: Int] = [:]
        var userGoal: [Ring: Double] = [:]
        for day in days.keys.sorted() {
            var goal: [Ring: Double] = [:]
            for ring in Ring.allCases {
                // Advance through the changes effective on or before this day; the last wins.
                let list = userGoals[ring] ?? []
                var i = nextUserGoal[ring] ?? 0
                while i < list.count, list[i].from <= day {
                    userGoal[ring] = list[i].value
                    i += 1
                }
                nextUserGoal[ring] = i
                let resolved = userGoal[ring] ?? appleGoals[day]?[ring] ?? lastKnown[ring] ?? ring.defaultGoal
                lastKnown[ring] = resolved
                goal[ring] = resolved
            }
            let values = days[day]!
            try insert.bind(1, day)
            try insert.bind(2, values.move)
            try insert.bind(3, goal[.move]!)
            try insert.bind(4, values.exercise)
            try insert.bind(5, goal[.exercise]!)
            try insert.bind(6, values.stand)
            try insert.bind(7, goal[.stand]!)
            try insert.run()
        }
    }
}
