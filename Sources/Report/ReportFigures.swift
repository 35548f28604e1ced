import HealthModel
import Vault

/// What a report draws, from whichever side holds it: a person's vault (its read models) or a
/// researcher's opened bundle (its daily lines). The report lays these figures out and computes
/// none of them but averages and the arcs' geometry.
struct ReportFigures {
    /// Days with ring figures, ascending.
    var rings: [RingDay]
    /// The last day with figures: a report without `--to` ends there.
    var lastDay: LocalDay?
    var streaks: Streaks
    /// A metric's figure per period (`steps`, `active-energy`, `exercise-time`, `stand-hour`).
    var summary: (_ metric: String, _ period: SummaryPeriod, _ from: LocalDay, _ to: LocalDay) throws -> [PeriodFigure]
    /// Nights ending inside the range, ascending.
    var nights: (_ from: LocalDay, _ to: LocalDay) throws -> [NightFigures]
    /// Workouts inside the range per activity type (HealthKit's name).
    var workouts: (_ from: LocalDay, _ to: LocalDay) throws -> [(type: String, count: Int, minutes: Double)]
    /// Sets and workouts per period with their shares per body part and motion (`stats`).
    var training: (_ period: SummaryPeriod, _ from: LocalDay, _ to: LocalDay) throws -> [TrainingPeriod]
    /// Each tracker's days up to a day.
    var trackers: (_ to: LocalDay) throws -> [TrackerStrip]
    /// The last day any tracker has an entry for (a person logs habits after their last import).
    var lastTrackerDay: LocalDay? = nil
    /// Whether the rings' goals are the person's or Apple's, not the assumed defaults.
    var goalsKnown = true

    struct PeriodFigure {
        var period: String
        var value: Double
        var unit: String
    }

    /// Minutes of a night by stage.
    struct NightFigures {
        var night: LocalDay
        var asleep: Double
        var core: Double
        var deep: Double
        var rem: Double
        var awake: Double
    }

    /// A tracker's logged days: `success` is nil where the definition is not known (a bundle
    /// carries the daily levels, not the tracker's success set).
    struct TrackerStrip {
        var name: String
        var levels: String
        var days: [LocalDay: Bool?]
        var streak: (current: Int, longest: Int)?
    }
}

extension ReportFigures {
    /// The figures of a vault's read models.
    init(vault: Vault) throws {
        rings = try vault.rings()
        // The last day with any data, rings or not (a vault of sleep alone has no ring days).
        lastDay = ([rings.last?.day] + (try vault.heldTypes()).map(\.last)).compactMap { $0 }.max()
        streaks = Streaks(days: rings)
        summary = { metric, period, from, to in
            try vault.summary(metric: metric, by: period, from: from, to: to).map { PeriodFigure(period: $0.period, value: $0.value, unit: $0.unit) }
        }
        nights = { from, to in
            try vault.sleep(from: from, to: to).map { NightFigures(night: $0.night, asleep: $0.asleep, core: $0.core, deep: $0.deep, rem: $0.rem, awake: $0.awake) }
        }
        workouts = { from, to in
            try vault.workouts(by: .month, from: from, to: to).map { ($0.type, $0.count, $0.minutes) }
        }
        training = { period, from, to in try vault.trainingStats(by: period, from: from, to: to) }
        goalsKnown = try vault.goalsKnown()
        lastTrackerDay = try vault.trackers().compactMap { try vault.trackerDays(name: $0.name).last?.day }.max()
        trackers = { to in
            try vault.trackers().map { tracker in
                let from = LocalDay(dayNumber: to.dayNumber - 59)
                var days: [LocalDay: Bool?] = [:]
                for day in try vault.trackerDays(name: tracker.name, from: from, to: to) { days[day.day] = tracker.success.contains(day.level) }
                let streak = try vault.trackerStreak(name: tracker.name)
                return TrackerStrip(name: tracker.name, levels: tracker.levels.map { "\($0.name) \($0.value)" }.joined(separator: ", "),
                                    days: days, streak: (streak.current, streak.longest))
            }
        }
    }
}
