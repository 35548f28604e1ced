import HealthModel

/// One period of `stats` (SoFit's Stats page): sets of exercises and workouts, what they add up
/// to, and how they share out over body parts and motions.
public struct TrainingPeriod: Equatable, Sendable {
    public var period: String
    /// Sets logged with `practice`, and their repetitions.
    public var sets: Int
    public var repetitions: Int
    /// Minutes of sets (those with a duration) and of workouts.
    public var minutes: Double
    public var workouts: Int
    /// Each body part's share (0...1) of the period's sets and workouts; they sum to 1. A set or
    /// workout working several parts gives each an equal part of its weight; one whose kind says
    /// no part counts under `unspecified`.
    public var bodyParts: [String: Double]
    /// Each motion's share; a workout whose activity type is not classified counts under `unknown`.
    public var motion: [String: Double]

    /// The share key of what names no body part.
    public static let unspecified = "unspecified"
    /// The share key of a workout type no table classifies.
    public static let unknown = "unknown"
}

/// What the shares weigh: each set and workout once, or by its minutes.
public enum TrainingShareWeight: Sendable {
    case count, minutes
}

/// A set (or several of one exercise on one day) or a workout, as `TrainingTally` adds it up.
public struct TrainingItem: Sendable {
    public var day: LocalDay
    /// Sets it stands for (0 for a workout) and their repetitions.
    public var sets: Int
    public var repetitions: Int
    public var workouts: Int
    public var minutes: Double
    /// Body-part names; empty when its kind names none.
    public var bodyParts: [String]
    public var motion: String

    /// `sets` sets of an exercise.
    public init(day: LocalDay, sets: Int, repetitions: Int, minutes: Double, bodyParts: [String], motion: String) {
        (self.day, self.sets, self.repetitions, self.workouts, self.minutes) = (day, sets, repetitions, 0, minutes)
        (self.bodyParts, self.motion) = (bodyParts, motion)
    }

    /// `count` workouts of a HealthKit activity type, classified by `WorkoutActivityTypes`.
    public init(day: LocalDay, workoutType: String, count: Int = 1, minutes: Double) {
        let profile = WorkoutActivityTypes.profile(of: workoutType)
        (self.day, self.sets, self.repetitions, self.workouts, self.minutes) = (day, 0, 0, count, minutes)
        bodyParts = profile?.bodyParts.map(\.rawValue) ?? []
        motion = profile?.motion.rawValue ?? TrainingPeriod.unknown
    }
}

/// How sets and workouts add up to `stats`' periods: one rule for the vault's read models and a
/// bundle's daily lines.
public enum TrainingTally {
    /// Periods in day order (only those with an item). By count, each set and workout weighs one;
    /// by minutes, its minutes. A set or workout working several parts gives each an equal part of
    /// its weight; one naming none weighs under `unspecified`. By minutes, a period without any
    /// minutes has empty shares.
    public static func periods(_ items: [TrainingItem], by period: SummaryPeriod, rangeEnd: LocalDay,
                               weight: TrainingShareWeight) -> [TrainingPeriod] {
        var result: [TrainingPeriod] = []
        var partWeights: [String: Double] = [:], motionWeights: [String: Double] = [:]
        func close() {
            guard let last = result.indices.last else { return }
            let parts = partWeights.values.reduce(0, +), motions = motionWeights.values.reduce(0, +)
            result[last].bodyParts = parts > 0 ? partWeights.mapValues { $0 / parts } : [:]
            result[last].motion = motions > 0 ? motionWeights.mapValues { $0 / motions } : [:]
            partWeights = [:]
            motionWeights = [:]
        }
        for item in items.sorted(by: { $0.day < $1.day }) {
            let key = period.key(of: item.day, rangeEnd: rangeEnd)
            if result.last?.period != key {
                close()
                result.append(TrainingPeriod(period: key, sets: 0, repetitions: 0, minutes: 0, workouts: 0, bodyParts: [:], motion: [:]))
            }
            let i = result.count - 1
            result[i].sets += item.sets
            result[i].repetitions += item.repetitions
            result[i].workouts += item.workouts
            result[i].minutes += item.minutes
            let w = weight == .count ? Double(item.sets + item.workouts) : item.minutes
            guard w > 0 else { continue }
            motionWeights[item.motion, default: 0] += w
            if item.bodyParts.isEmpty {
                partWeights[TrainingPeriod.unspecified, default: 0] += w
            } else {
                for part in item.bodyParts { partWeights[part, default: 0] += w / Double(item.bodyParts.count) }
            }
        }
        close()
        return result
    }
}

extension ReadModels {
    /// Sets and workouts per period from `from` to `to` (inclusive, either open), with their shares
    /// per body part and motion weighed by `weight` (`TrainingTally`). Two-week periods end on
    /// `to`, else on the last day with a set or workout.
    public func trainingStats(by period: SummaryPeriod, from: LocalDay? = nil, to: LocalDay? = nil,
                              weight: TrainingShareWeight = .count) throws -> [TrainingPeriod] {
        var items: [TrainingItem] = []
        let practices = try db.prepare("""
            SELECT day, repetitions, seconds, body_parts, motion FROM practices WHERE day BETWEEN ? AND ? ORDER BY day, at
            """)
        try practices.bind(1, from?.dayNumber ?? Int64.min)
        try practices.bind(2, to?.dayNumber ?? Int64.max)
        while try practices.step() {
            items.append(TrainingItem(day: LocalDay(dayNumber: practices.int64(0)), sets: 1, repetitions: Int(practices.int64(1)),
                                      minutes: (practices.optionalDouble(2) ?? 0) / 60,
                                      bodyParts: (practices.text(3) ?? "").split(separator: ",").map(String.init),
                                      motion: practices.text(4) ?? TrainingPeriod.unknown))
        }
        for workout in try countedWorkouts(from: from, to: to) {
            items.append(TrainingItem(day: LocalDay(dayNumber: workout.day), workoutType: workout.type, minutes: workout.minutes))
        }
        let rangeEnd = to ?? items.map(\.day).max() ?? LocalDay(dayNumber: 0)
        return TrainingTally.periods(items, by: period, rangeEnd: rangeEnd, weight: weight)
    }
}

/// One exercise's sets on one day, as a daily bundle line gives them.
public struct PracticeDay: Equatable, Sendable {
    public var day: LocalDay
    public var exercise: String
    public var sets: Int
    public var repetitions: Int
}

extension ReadModels {
    /// Each day's sets and repetitions per exercise from `from` to `to` (inclusive, either open).
    public func practiceDays(from: LocalDay? = nil, to: LocalDay? = nil) throws -> [PracticeDay] {
        let statement = try db.prepare("""
            SELECT day, exercise, COUNT(*), SUM(repetitions) FROM practices WHERE day BETWEEN ? AND ? GROUP BY day, exercise ORDER BY day, exercise
            """)
        try statement.bind(1, from?.dayNumber ?? Int64.min)
        try statement.bind(2, to?.dayNumber ?? Int64.max)
        var days: [PracticeDay] = []
        while try statement.step() {
            days.append(PracticeDay(day: LocalDay(dayNumber: statement.int64(0)), exercise: statement.text(1) ?? "",
                                    sets: Int(statement.int64(2)), repetitions: Int(statement.int64(3))))
        }
        return days
    }
}
