import HealthModel
import Projections

/// The report's training section (SoFit's Stats page): per week, two weeks and month, each
/// period's shares per body part and per motion as bars stacked to 100 %, and the latest two
/// weeks' figures.
enum TrainingPanels {
    static let partColors: [(String, String)] = [
        ("chest", "#fa114f"), ("back", "#ff9500"), ("shoulders", "#ffcc00"), ("arms", "#92e82a"), ("core", "#1eeaef"),
        ("legs", "#5ac8fa"), ("full-body", "#af52de"), (TrainingPeriod.unspecified, "#666"),
    ]
    static let motionColors: [(String, String)] = [
        ("strength", "#fa114f"), ("endurance", "#5ac8fa"), ("mobility", "#92e82a"), (TrainingPeriod.unknown, "#666"),
    ]

    static func context(_ figures: ReportFigures, from: LocalDay, to: LocalDay) throws -> [String: Any] {
        let periods: [(String, SummaryPeriod)] = [("Weekly", .week), ("Two-weekly", .twoWeeks), ("Monthly", .month)]
        var panels: [[String: Any]] = []
        var latest: TrainingPeriod?
        for (label, period) in periods {
            let rows = try figures.training(period, from, to)
            // The two weeks ending on the report's last day, when they hold a set or a workout.
            if period == .twoWeeks, let last = rows.last, last.period.hasSuffix(to.description) { latest = last }
            panels.append(["period": label,
                           "bodyParts": BarChart.svg(stacks(rows, \.bodyParts, colors: partColors, period: period), unit: "%"),
                           "motion": BarChart.svg(stacks(rows, \.motion, colors: motionColors, period: period), unit: "%")])
        }
        var context: [String: Any] = [
            "panels": panels,
            "partLegend": legend(partColors), "motionLegend": legend(motionColors),
        ]
        if let latest {
            context["latest"] = ["period": latest.period, "sets": latest.sets, "reps": latest.repetitions,
                                 "minutes": BarChart.format(latest.minutes), "workouts": latest.workouts,
                                 "parts": shares(latest.bodyParts), "motions": shares(latest.motion)]
        }
        return context
    }

    /// One bar per period, its shares stacked in the colours' order; a key without a colour
    /// (none today) is drawn grey rather than dropped.
    static func stacks(_ rows: [TrainingPeriod], _ shares: KeyPath<TrainingPeriod, [String: Double]>, colors: [(String, String)],
                       period: SummaryPeriod) -> [BarChart.Stack] {
        rows.map { row in
            let values = row[keyPath: shares]
            var parts = colors.compactMap { key, color in values[key].map { ($0 * 100, color) } }
            for (key, value) in values where !colors.contains(where: { $0.0 == key }) { parts.append((value * 100, "#999")) }
            return BarChart.Stack(label: HealthReport.label(ofPeriod: row.period, period), parts: parts)
        }
    }

    static func legend(_ colors: [(String, String)]) -> String {
        colors.map { #"<i style="background:\#($0.1)"></i>\#($0.0)"# }.joined(separator: " ")
    }

    /// `legs 50 %, chest 25 %`, largest first.
    static func shares(_ values: [String: Double]) -> String {
        values.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { "\($0.key) \(BarChart.format($0.value * 100)) %" }.joined(separator: ", ")
    }
}
