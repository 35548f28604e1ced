import HealthModel
import Projections
import ResearchBundle

/// The first source of a bundle's lines: the figures the read models hold, for daily grants, as
/// `summary`, `rings`, `sleep`, `workouts` and `stats` show them (docs/bundle-format.md, "daily").
/// Besides each metric's day, the vault derives per day `activity` the three rings and their
/// goals, `sleep` each night's minutes by stage, `workouts` each day's minutes and count per
/// activity type, and the sets of exercises: a researcher can draw what those commands show
/// without a single sample leaving.
extension ExportPlan {
    typealias Emit = (HealthCategory, BundleLine) throws -> Void

    func figures(from models: ReadModels, _ emit: Emit) throws {
        func figure(_ category: HealthCategory, _ metric: String, _ period: String, _ value: Double, _ unit: String,
                    min: Double? = nil, max: Double? = nil, samples: Int) throws {
            try emit(category, .figure(.exported(category: category.rawValue, metric: metric, period: period, value: value, unit: unit,
                                                 min: min, max: max, samples: samples)))
        }
        for metric in try models.metrics() {
            let category = HealthCategory.of(type: metric.identifier)
            guard let grant = grant(category, at: .daily), grant.admits(category, type: metric.identifier) else { continue }
            for row in try models.summary(metric: metric.identifier, by: .day, from: grant.from, to: grant.to) where row.unit == metric.unit {
                if let day = LocalDay(parsing: row.period), erased.contains(category, day: day) { continue }
                if let since, let day = LocalDay(parsing: row.period), since.heldAggregate(category, .daily, day: day) { continue }
                try figure(category, metric.identifier, row.period, row.value, row.unit, min: row.min, max: row.max, samples: row.samples)
            }
        }
        if let grant = grant(.activity, at: .daily) {
            for day in try models.rings(from: grant.from, to: grant.to) where !erased.contains(.activity, day: day.day) {
                if let since, since.heldAggregate(.activity, .daily, day: day.day, ringFigure: true) { continue }
                let rings: [(String, Double, Double, String)] = [
                    ("move", day.move, day.moveGoal, "kcal"), ("exercise", day.exercise, day.exerciseGoal, "min"),
                    ("stand", Double(day.stand), day.standGoal, "h"),
                ]
                for (ring, value, goal, unit) in rings {
                    try figure(.activity, "ring:" + ring, day.day.description, value, unit, samples: 0)
                    try figure(.activity, "goal:" + ring, day.day.description, goal, unit, samples: 0)
                }
            }
        }
        if let grant = grant(.sleep, at: .daily) {
            for night in try models.sleep(from: grant.from, to: grant.to) where grant.covers(day: night.night) && !erased.contains(.sleep, day: night.night) {
                if let since, since.heldAggregate(.sleep, .daily, day: night.night) { continue }
                let stages: [(String, Double)] = [
                    ("inBed", night.inBed), ("asleep", night.asleep), ("core", night.core), ("deep", night.deep),
                    ("rem", night.rem), ("awake", night.awake),
                ]
                for (stage, minutes) in stages { try figure(.sleep, "sleep:" + stage, night.night.description, minutes, "min", samples: 0) }
            }
        }
        if let grant = grant(.workouts, at: .daily) {
            for row in try models.workouts(by: .day, from: grant.from, to: grant.to) {
                if let day = LocalDay(parsing: row.period), erased.contains(.workouts, day: day) { continue }
                if let since, let day = LocalDay(parsing: row.period), since.heldAggregate(.workouts, .daily, day: day) { continue }
                try figure(.workouts, "workout:" + row.type, row.period, row.minutes, "min", samples: row.count)
            }
        }
        // Sets of exercises: each day's repetitions per exercise (`samples` the sets), for daily and
        // hourly grants alike (a set's unit is the day, as a tracker's).
        if let grant = grants[.workouts], grant.granularity != .raw {
            for row in try models.practiceDays(from: grant.from, to: grant.to) where !erased.contains(.workouts, day: row.day) {
                if let since, since.heldAggregate(.workouts, grant.granularity, day: row.day) { continue }
                try figure(.workouts, "exercise:" + row.exercise, row.day.description, Double(row.repetitions), "reps", samples: row.sets)
            }
        }
    }
}
