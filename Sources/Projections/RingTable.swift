import HealthModel

/// Fills the `rings` table: one row per local day that has ring data (active energy, exercise
/// minutes, a stand-hour record or Apple's summary), with the goal in force that day.
///
/// A day's goal, per ring: the last one the person set (`goals set`) effective on or before
/// that day; else the goal in that day's imported ActivitySummary; else the goal of the latest
/// earlier day; else Apple's default.
enum RingTable {
    /// Recomputes the rows of every day from `firstDay` on (every day when nil). Earlier rows
    /// are unchanged by what changed, and the last of them gives the goal carried forward.
    static func refresh(_ db: SQLiteConnection, from firstDay: Int64? = nil) throws {
        let from = firstDay ?? Int64.min
        var days: [Int64: (move: Double, exercise: Double, stand: Int64)] = [:]
        let metricID = try db.prepare("SELECT id FROM metrics WHERE identifier = ? AND unit = ?")
        let totals = try db.prepare("SELECT day, total FROM daily WHERE metric_id = ? AND day >= ?")
        for ring in [Ring.move, .exercise] {
            try metricID.bind(1, ring.metric!)
            try metricID.bind(2, ring.unit)
            guard try metricID.step() else {
                metricID.reset()
                continue
            }
            let id = metricID.int64(0)
            metricID.reset()
            try totals.bind(1, id)
            try totals.bind(2, from)
            while try totals.step() {
                let day = totals.int64(0)
                if ring == .move { days[day, default: (0, 0, 0)].move = totals.double(1) } else { days[day, default: (0, 0, 0)].exercise = totals.double(1) }
            }
            totals.reset()
        }
        let stand = try db.prepare("SELECT day, hours FROM stand_hours WHERE day >= ?")
        try stand.bind(1, from)
        while try stand.step() { days[stand.int64(0), default: (0, 0, 0)].stand = stand.int64(1) }

        var appleGoals: [Int64: [Ring: Double]] = [:]
        let apple = try db.prepare("SELECT day, move_goal, exercise_goal, stand_goal FROM apple_rings WHERE day >= ?")
        try apple.bind(1, from)
        while try apple.step() {
            let day = apple.int64(0)
            if days[day] == nil { days[day] = (0, 0, 0) }
            for (i, ring) in Ring.allCases.enumerated() {
                if let goal = apple.optionalDouble(i + 1), goal > 0 { appleGoals[day, default: [:]][ring] = goal }
            }
        }

        // The goals of the last day before `from`: carried forward where nothing else says.
        var lastKnown: [Ring: Double] = [:]
        let before = try db.prepare("SELECT move_goal, exercise_goal, stand_goal FROM rings WHERE day < ? ORDER BY day DESC LIMIT 1")
        try before.bind(1, from)
        if try before.step() {
            lastKnown = [.move: before.double(0), .exercise: before.double(1), .stand: before.double(2)]
        }

        var userGoals: [Ring: [(from: Int64, value: Double)]] = [:]
        let changes = try db.prepare("SELECT ring, value, from_day FROM goal_changes ORDER BY from_day, id")
        while try changes.step() {
            guard let ring = Ring(rawValue: changes.text(0) ?? "") else { continue }
            userGoals[ring, default: []].append((changes.int64(2), changes.double(1)))
        }

        let remove = try db.prepare("DELETE FROM rings WHERE day >= ?")
        try remove.bind(1, from)
        try remove.run()
        let insert = try db.prepare("INSERT INTO rings(day, move, move_goal, exercise, exercise_goal, stand, stand_goal) VALUES (?, ?, ?, ?, ?, ?, ?)")
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

    /// Recomputes the rows of `days` alone, whose ring values changed but whose goals did not
    /// (a total or stand hours): a day's goal depends on the goals set, that day's summary and
    /// the rows before it, never on values, so no other row changes. The goal is resolved as
    /// `refresh(from:)` resolves it; a day left without ring data loses its row.
    static func refresh(_ db: SQLiteConnection, days: Set<Int64>) throws {
        let metricID = try db.prepare("SELECT id FROM metrics WHERE identifier = ? AND unit = ?")
        var ringMetric: [Ring: Int64] = [:]
        for ring in [Ring.move, .exercise] {
            try metricID.bind(1, ring.metric!)
            try metricID.bind(2, ring.unit)
            if try metricID.step() { ringMetric[ring] = metricID.int64(0) }
            metricID.reset()
        }
        let total = try db.prepare("SELECT total FROM daily WHERE metric_id = ? AND day = ?")
        let stand = try db.prepare("SELECT hours FROM stand_hours WHERE day = ?")
        let apple = try db.prepare("SELECT move_goal, exercise_goal, stand_goal FROM apple_rings WHERE day = ?")
        let before = try db.prepare("SELECT move_goal, exercise_goal, stand_goal FROM rings WHERE day < ? ORDER BY day DESC LIMIT 1")
        let userGoal = try db.prepare("SELECT value FROM goal_changes WHERE ring = ? AND from_day <= ? ORDER BY from_day DESC, id DESC LIMIT 1")
        let remove = try db.prepare("DELETE FROM rings WHERE day = ?")
        let insert = try db.prepare("INSERT INTO rings(day, move, move_goal, exercise, exercise_goal, stand, stand_goal) VALUES (?, ?, ?, ?, ?, ?, ?)")
        for day in days.sorted() {
            var present = false
            var values: [Ring: Double] = [:]
            for (ring, id) in ringMetric {
                try total.bind(1, id)
                try total.bind(2, day)
                if try total.step() {
                    present = true
                    values[ring] = total.double(0)
                }
                total.reset()
            }
            try stand.bind(1, day)
            var standHours: Int64 = 0
            if try stand.step() {
                present = true
                standHours = stand.int64(0)
            }
            stand.reset()
            var appleGoals: [Ring: Double] = [:]
            try apple.bind(1, day)
            if try apple.step() {
                present = true
                for (i, ring) in Ring.allCases.enumerated() {
                    if let goal = apple.optionalDouble(i), goal > 0 { appleGoals[ring] = goal }
                }
            }
            apple.reset()
            try remove.bind(1, day)
            try remove.run()
            guard present else { continue }
            var lastKnown: [Ring: Double] = [:]
            try before.bind(1, day)
            if try before.step() {
                lastKnown = [.move: before.double(0), .exercise: before.double(1), .stand: before.double(2)]
            }
            before.reset()
            var goal: [Ring: Double] = [:]
            for ring in Ring.allCases {
                try userGoal.bind(1, ring.rawValue)
                try userGoal.bind(2, day)
                let set = try userGoal.step() ? userGoal.double(0) : nil
                userGoal.reset()
                goal[ring] = set ?? appleGoals[ring] ?? lastKnown[ring] ?? ring.defaultGoal
            }
            try insert.bind(1, day)
            try insert.bind(2, values[.move] ?? 0)
            try insert.bind(3, goal[.move]!)
            try insert.bind(4, values[.exercise] ?? 0)
            try insert.bind(5, goal[.exercise]!)
            try insert.bind(6, standHours)
            try insert.bind(7, goal[.stand]!)
            try insert.run()
        }
    }
}
