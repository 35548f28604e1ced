import HealthModel
import Projections
import ResearchBundle

extension ReportFigures {
    /// The figures of an opened bundle's daily lines (docs/bundle-format.md, "daily"): rings and
    /// goals from `ring:` and `goal:` lines, metrics from their own lines (summed over a period
    /// when cumulative, averaged by readings when discrete), nights from `sleep:` lines, workouts
    /// from `workout:` lines, trackers from `level` lines. What the bundle does not hold is
    /// drawn as missing, never guessed.
    init(dailyLines lines: [AggregateLine]) {
        var ringDays: [String: [String: Double]] = [:]
        var byMetric: [String: [(day: LocalDay, line: AggregateLine)]] = [:]
        var nightStages: [LocalDay: [String: Double]] = [:]
        var workoutDays: [(day: LocalDay, type: String, count: Int, minutes: Double)] = []
        var trackerDays: [String: [LocalDay: Bool?]] = [:]
        var trainingItems: [TrainingItem] = []
        var lastDay: LocalDay?
        for line in lines {
            guard let value = line.value, let day = LocalDay(parsing: line.period) else { continue }
            lastDay = max(lastDay ?? day, day)
            if line.metric.hasPrefix("ring:") || line.metric.hasPrefix("goal:") {
                ringDays[line.period, default: [:]][line.metric] = value
            } else if line.metric.hasPrefix("sleep:") {
                nightStages[day, default: [:]][String(line.metric.dropFirst(6))] = value
            } else if line.metric.hasPrefix("workout:") {
                workoutDays.append((day, String(line.metric.dropFirst(8)), line.samples, value))
                trainingItems.append(TrainingItem(day: day, workoutType: String(line.metric.dropFirst(8)), count: line.samples, minutes: value))
            } else if line.metric.hasPrefix("exercise:"), line.unit == "reps" {
                // A daily line names the exercise, not what it works: the catalogue's own say it,
                // a person's own count as unspecified.
                let name = String(line.metric.dropFirst(9))
                let known = ExerciseCatalog.seeded.first { $0.name == name }
                trainingItems.append(TrainingItem(day: day, sets: line.samples, repetitions: Int(value), minutes: 0,
                                                  bodyParts: known?.bodyParts.map(\.rawValue) ?? [],
                                                  motion: known?.motion.rawValue ?? TrainingPeriod.unknown))
            } else if line.unit == "level" {
                trackerDays[line.metric, default: [:]][day] = .some(nil)
            } else {
                byMetric[line.metric, default: []].append((day, line))
            }
        }
        rings = ringDays.compactMap { period, figures -> RingDay? in
            guard let day = LocalDay(parsing: period) else { return nil }
            return RingDay(day: day, move: figures["ring:move"] ?? 0, moveGoal: figures["goal:move"] ?? 0,
                           exercise: figures["ring:exercise"] ?? 0, exerciseGoal: figures["goal:exercise"] ?? 0,
                           stand: Int(figures["ring:stand"] ?? 0), standGoal: figures["goal:stand"] ?? 0)
        }.sorted { $0.day < $1.day }
        self.lastDay = lastDay
        streaks = Streaks(days: rings)
        let ringList = rings
        summary = { metric, period, from, to in
            // Stand hours are a category type: a bundle carries them as the stand ring's figure.
            if metric == "stand-hour" {
                let days = ringList.filter { $0.day >= from && $0.day <= to }.map { ($0.day, Double($0.stand)) }
                return Self.grouped(days, unit: "h", cumulative: true, period: period, rangeEnd: to)
            }
            guard let identifier = MetricNames.identifier(for: metric) else { return [] }
            let rows = (byMetric[identifier] ?? []).filter { $0.day >= from && $0.day <= to }
            let cumulative = AggregationStyle.of(type: identifier) == .cumulative
            var result: [PeriodFigure] = []
            for unit in Array(Set(rows.map(\.line.unit))).sorted() {
                let days = rows.filter { $0.line.unit == unit }.map { ($0.day, $0.line.value ?? 0, $0.line.samples) }
                result += Self.grouped(days, unit: unit, cumulative: cumulative, period: period, rangeEnd: to)
            }
            return result
        }
        let nightList = nightStages.map { day, stages in
            NightFigures(night: day, asleep: stages["asleep"] ?? 0, core: stages["core"] ?? 0, deep: stages["deep"] ?? 0,
                         rem: stages["rem"] ?? 0, awake: stages["awake"] ?? 0)
        }.sorted { $0.night < $1.night }
        nights = { from, to in nightList.filter { $0.night >= from && $0.night <= to } }
        workouts = { from, to in
            var totals: [String: (count: Int, minutes: Double)] = [:]
            for w in workoutDays where w.day >= from && w.day <= to {
                totals[w.type, default: (0, 0)].count += w.count
                totals[w.type, default: (0, 0)].minutes += w.minutes
            }
            return totals.sorted { $0.key < $1.key }.map { ($0.key, $0.value.count, $0.value.minutes) }
        }
        let items = trainingItems
        training = { period, from, to in
            TrainingTally.periods(items.filter { $0.day >= from && $0.day <= to }, by: period, rangeEnd: to, weight: .count)
        }
        trackers = { _ in
            trackerDays.sorted { $0.key < $1.key }.map { TrackerStrip(name: $0.key, levels: "levels as logged", days: $0.value, streak: nil) }
        }
    }

    /// Days' figures per period, in the order periods first appear: summed when cumulative,
    /// else averaged, each day weighted by its readings.
    static func grouped(_ days: [(LocalDay, Double)], unit: String, cumulative: Bool, period: SummaryPeriod, rangeEnd: LocalDay) -> [PeriodFigure] {
        grouped(days.map { ($0.0, $0.1, 1) }, unit: unit, cumulative: cumulative, period: period, rangeEnd: rangeEnd)
    }

    static func grouped(_ days: [(LocalDay, Double, Int)], unit: String, cumulative: Bool, period: SummaryPeriod, rangeEnd: LocalDay) -> [PeriodFigure] {
        var order: [String] = []
        var sums: [String: (value: Double, weight: Double)] = [:]
        for (day, value, samples) in days.sorted(by: { $0.0 < $1.0 }) {
            let key = period.key(of: day, rangeEnd: rangeEnd)
            if sums[key] == nil { order.append(key) }
            let weight = Double(max(samples, 1))
            sums[key, default: (0, 0)].value += cumulative ? value : value * weight
            sums[key, default: (0, 0)].weight += weight
        }
        return order.map { key in
            let s = sums[key]!
            return PeriodFigure(period: key, value: cumulative ? s.value : s.value / s.weight, unit: unit)
        }
    }
}
