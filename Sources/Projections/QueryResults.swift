import HealthModel

/// One day of rings: computed values, the goals in force, and Apple's own values when imported.
public struct RingDay: Equatable, Sendable {
    public var day: LocalDay
    /// kcal.
    public var move: Double
    public var moveGoal: Double
    /// Minutes.
    public var exercise: Double
    public var exerciseGoal: Double
    /// Hours with a "stood" record.
    public var stand: Int
    public var standGoal: Double
    /// Apple's ActivitySummary values for the day, when one was imported.
    public var apple: AppleRings?

    public init(day: LocalDay, move: Double, moveGoal: Double, exercise: Double, exerciseGoal: Double, stand: Int, standGoal: Double,
                apple: AppleRings? = nil) {
        self.day = day
        self.move = move
        self.moveGoal = moveGoal
        self.exercise = exercise
        self.exerciseGoal = exerciseGoal
        self.stand = stand
        self.standGoal = standGoal
        self.apple = apple
    }

    /// Whether the ring's value reached its goal.
    public func closed(_ ring: Ring) -> Bool {
        switch ring {
        case .move: move.rounded() >= moveGoal
        case .exercise: exercise.rounded() >= exerciseGoal
        case .stand: Double(stand) >= standGoal
        }
    }
}

/// How `summary` groups days.
public enum SummaryPeriod: String, CaseIterable, Sendable {
    case day, week
    /// Fourteen days, counted back from the last day of the range.
    case twoWeeks = "2weeks"
    case month

    /// The period key of a day: `2024-01-01`, `2024-W01` (ISO 8601 week), `2024-01`, or for two
    /// weeks `2024-01-01..2024-01-14`, periods ending on `rangeEnd` (the range's last day) and
    /// every fourteen days before it.
    public func key(of day: LocalDay, rangeEnd: LocalDay) -> String {
        switch self {
        case .day:
            return day.description
        case .week:
            let (year, week) = day.isoWeek
            return "\(year)-W\(week < 10 ? "0" : "")\(week)"
        case .twoWeeks:
            let back = LocalDay.floorDivide(rangeEnd.dayNumber - day.dayNumber, 14)
            let end = rangeEnd.dayNumber - 14 * back
            return "\(LocalDay(dayNumber: end - 13))..\(LocalDay(dayNumber: end))"
        case .month:
            let (y, m, _) = day.date
            return "\(y)-\(m < 10 ? "0" : "")\(m)"
        }
    }
}

extension LocalDay {
    /// Monday = 0 … Sunday = 6 (1970-01-01 was a Thursday).
    public var weekdayFromMonday: Int {
        let r = (dayNumber + 3) % 7
        return Int(r < 0 ? r + 7 : r)
    }

    /// ISO 8601 week-numbering year and week (the week's Thursday decides the year).
    public var isoWeek: (year: Int, week: Int) {
        let thursday = LocalDay(dayNumber: dayNumber - Int64(weekdayFromMonday) + 3)
        let year = thursday.date.year
        let januaryFirst = LocalDay(year: year, month: 1, day: 1)
        return (year, Int((thursday.dayNumber - januaryFirst.dayNumber) / 7) + 1)
    }
}

/// One period of a metric: for cumulative metrics the deduplicated sum; for discrete ones the
/// average, with minimum and maximum.
public struct SummaryRow: Equatable, Sendable {
    public var period: String
    /// The sum (cumulative metrics, category types) or the average (discrete metrics).
    public var value: Double
    public var unit: String
    public var samples: Int
    public var min: Double?
    public var max: Double?
}

/// A run of consecutive days on which a ring (or all three) closed.
public struct Streak: Equatable, Sendable {
    /// Length of the streak that ends on the latest day with ring data (0 if that day missed).
    public var current: Int
    /// First and last day of the current streak (nil when it is 0).
    public var currentFrom: LocalDay?
    public var currentTo: LocalDay?
    public var longest: Int
    public var longestFrom: LocalDay?
    public var longestTo: LocalDay?

    public init(current: Int, longest: Int, currentFrom: LocalDay? = nil, currentTo: LocalDay? = nil,
                longestFrom: LocalDay? = nil, longestTo: LocalDay? = nil) {
        self.current = current
        self.currentFrom = currentFrom
        self.currentTo = currentTo
        self.longest = longest
        self.longestFrom = longestFrom
        self.longestTo = longestTo
    }
}

/// Streaks per ring and for all three closed on the same day.
public struct Streaks: Equatable, Sendable {
    public var move: Streak
    public var exercise: Streak
    public var stand: Streak
    public var all: Streak

    /// The streaks of `days` (ascending): a streak is consecutive days whose ring closed; a day
    /// missing from `days` or not closed ends one.
    public init(days: [RingDay]) {
        func streak(_ closed: (RingDay) -> Bool) -> Streak {
            var result = Streak(current: 0, longest: 0)
            var run = 0
            var runStart: LocalDay?
            var previous: LocalDay?
            for day in days {
                let consecutive = previous.map { $0.dayNumber + 1 == day.day.dayNumber } ?? false
                if closed(day) {
                    if run > 0 && consecutive { run += 1 } else { run = 1; runStart = day.day }
                    if run > result.longest {
                        result.longest = run
                        result.longestFrom = runStart
                        result.longestTo = day.day
                    }
                } else {
                    run = 0
                }
                previous = day.day
            }
            result.current = run
            if run > 0 { result.currentFrom = runStart; result.currentTo = previous }
            return result
        }
        move = streak { $0.closed(.move) }
        exercise = streak { $0.closed(.exercise) }
        stand = streak { $0.closed(.stand) }
        all = streak { $0.closed(.move) && $0.closed(.exercise) && $0.closed(.stand) }
    }
}

/// A goal the person set, effective from a day.
public struct GoalChange: Equatable, Sendable {
    public var ring: Ring
    public var value: Double
    public var from: LocalDay
}

/// A source with its rank (1 counts first) and how many samples it wrote.
public struct SourceRow: Equatable, Sendable {
    public var rank: Int
    public var key: SourceKey
    public var samples: Int
    /// Whether the person placed it (`sources order`), rather than the default ranking.
    public var ordered: Bool
}

/// The columns and rows of a `sql` query.
public struct SQLResult: Equatable, Sendable {
    public var columns: [String]
    public var rows: [[SQLValue]]
}

/// One type the vault holds (`types`): how many records, from which day to which.
public struct HeldTypeRow: Equatable, Sendable {
    public var type: String
    /// The unit its values are read in; nil for records without a quantity.
    public var unit: String?
    public var category: HealthCategory
    public var count: Int
    /// Local days of the first and last record; nil when it has only undated records.
    public var first: LocalDay?
    public var last: LocalDay?

    public init(type: String, unit: String?, category: HealthCategory, count: Int, first: LocalDay?, last: LocalDay?) {
        self.type = type
        self.unit = unit
        self.category = category
        self.count = count
        self.first = first
        self.last = last
    }
}

/// Workouts of one kind in one period (`workouts`): how many, minutes, kcal and metres.
public struct WorkoutRow: Equatable, Sendable {
    public var period: String
    /// The activity type as HealthKit names it (`HKWorkoutActivityTypeRunning`).
    public var type: String
    public var count: Int
    public var minutes: Double
    public var energy: Double
    public var distance: Double

    public init(period: String, type: String, count: Int, minutes: Double, energy: Double, distance: Double) {
        self.period = period
        self.type = type
        self.count = count
        self.minutes = minutes
        self.energy = energy
        self.distance = distance
    }
}
