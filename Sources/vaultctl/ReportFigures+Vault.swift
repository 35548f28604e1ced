import HealthModel
import Report
import Vault

extension ReportFigures {
    /// The figures of a vault's read models: the report draws them and knows nothing of the vault.
    init(vault: Vault) throws {
        let rings = try vault.rings()
        // The last day with any data, rings or not (a vault of sleep alone has no ring days).
        let lastDay = ([rings.last?.day] + (try vault.heldTypes()).map(\.last)).compactMap { $0 }.max()
        self.init(
            rings: rings, lastDay: lastDay, streaks: Streaks(days: rings),
            summary: { metric, period, from, to in
                try vault.summary(metric: metric, by: period, from: from, to: to).map { PeriodFigure(period: $0.period, value: $0.value, unit: $0.unit) }
            },
            nights: { from, to in
                try vault.sleep(from: from, to: to).map { NightFigures(night: $0.night, asleep: $0.asleep, core: $0.core, deep: $0.deep, rem: $0.rem, awake: $0.awake) }
            },
            workouts: { from, to in
                try vault.workouts(by: .month, from: from, to: to).map { ($0.type, $0.count, $0.minutes) }
            },
            training: { period, from, to in try vault.trainingStats(by: period, from: from, to: to) },
            trackers: { to in
                try vault.trackers().map { tracker in
                    let from = LocalDay(dayNumber: to.dayNumber - 59)
                    var days: [LocalDay: Bool?] = [:]
                    for day in try vault.trackerDays(name: tracker.name, from: from, to: to) { days[day.day] = tracker.success.contains(day.level) }
                    let streak = try vault.trackerStreak(name: tracker.name)
                    return TrackerStrip(name: tracker.name, levels: tracker.levels.map { "\($0.name) \($0.value)" }.joined(separator: ", "),
                                        days: days, streak: (streak.current, streak.longest))
                }
            },
            lastTrackerDay: try vault.trackers().compactMap { try vault.trackerDays(name: $0.name).last?.day }.max(),
            goalsKnown: try vault.goalsKnown())
    }
}
