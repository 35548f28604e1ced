import Foundation
import HealthModel
import Mustache
import Projections
import ResearchBundle

/// `vaultctl report`: one self-contained HTML file (inline CSS and SVG, no script, nothing
/// fetched): rings per day as Apple draws them, month calendars of rings, streaks, trends (90
/// days against 365), weekly, two-weekly and monthly charts, sleep per night, workouts by type,
/// training shares per body part and motion, trackers. Every number comes from a vault query or a bundle's daily lines
/// (`ReportFigures`); the report only lays them out (the template is `ReportTemplate.html`,
/// rendered with swift-mustache).
public enum HealthReport {
    /// A rendered report and the days it covers (`first...last`), which the command says.
    public struct Rendered {
        public var html: String
        public var first: LocalDay
        public var last: LocalDay
    }

    /// The report of a vault's figures (`ReportFigures` of its read models), `from...to` (default:
    /// the year up to the last day with data, however long ago that was).
    public static func render(vaultFigures figures: ReportFigures, from: LocalDay? = nil, to: LocalDay? = nil, now: Date = Date()) throws -> Rendered {
        try render(figures, title: "Your health", origin: "the vault's read models", from: from, to: to, now: now, trackersToToday: true)
    }

    /// The report of an opened bundle's daily lines (`report --bundle DIR`): what the person
    /// shared, drawn as their own report draws it.
    public static func render(bundleLines: [AggregateLine], sender: String, from: LocalDay? = nil, to: LocalDay? = nil, now: Date = Date()) throws -> Rendered {
        try render(ReportFigures(dailyLines: bundleLines), title: "Shared health data", origin: "the daily lines of a bundle from \(sender)",
                   from: from, to: to, now: now, trackersToToday: false)
    }

    /// The range a report of `figures` covers: `from...to` as given, else the year ending on the
    /// last day with data (today when there is none).
    static func range(_ figures: ReportFigures, from: LocalDay?, to: LocalDay?, now: Date) -> (first: LocalDay, last: LocalDay) {
        let last = to ?? figures.lastDay
            ?? LocalDay(instant: Int64(now.timeIntervalSince1970), utcOffset: Int32(TimeZone.current.secondsFromGMT(for: now)))
        return (from ?? LocalDay(dayNumber: last.dayNumber - 364), last)
    }

    /// `trackersToToday`: a person keeps logging after their last import, so their own report's
    /// tracker strips run to their last entry; a bundle's end on its last day.
    static func render(_ figures: ReportFigures, title: String, origin: String, from: LocalDay?, to: LocalDay?, now: Date,
                       trackersToToday: Bool) throws -> Rendered {
        let allRings = figures.rings
        let (first, last) = range(figures, from: from, to: to, now: now)
        let rings = allRings.filter { $0.day >= first && $0.day <= last }
        var context: [String: Any] = [
            "title": title, "origin": origin,
            "from": first.description, "to": last.description,
            "generated": ISO8601DateFormatter().string(from: now),
        ]
        if let latest = rings.last { context["latest"] = latestRings(latest) }
        if !rings.isEmpty, !figures.goalsKnown {
            context["assumedGoals"] = "No ring goal was ever set (nor in Apple's summaries): the rings are drawn against 400 kcal, 30 min and 12 h."
        }
        context["calendars"] = calendars(rings)
        context["streaks"] = streaks(figures.streaks)
        context["trends"] = try trends(figures, rings: allRings.filter { $0.day <= last }, last: last)
        context["charts"] = try charts(figures, from: first, to: last)
        context["sleep"] = try sleep(figures, from: first, to: last)
        context["workouts"] = try workouts(figures, from: first, to: last)
        context["training"] = try TrainingPanels.context(figures, from: first, to: last)
        // A person logs habits after their last import: their strips run to the last entry when
        // that is later than the range (never to the day the report is made).
        context["trackers"] = try trackers(figures, to: to ?? (trackersToToday ? max(last, figures.lastTrackerDay ?? last) : last))
        return Rendered(html: try MustacheTemplate(string: ReportTemplate.html).render(context), first: first, last: last)
    }

    static func fraction(_ value: Double, _ goal: Double) -> Double { goal > 0 ? value / goal : 0 }

    static func latestRings(_ day: RingDay) -> [String: Any] {
        [
            "day": day.day.description,
            "svg": RingGeometry.svg(day: day.day.description, move: fraction(day.move, day.moveGoal), exercise: fraction(day.exercise, day.exerciseGoal),
                                    stand: fraction(Double(day.stand), day.standGoal), size: 180),
            "move": "\(BarChart.format(day.move)) / \(BarChart.format(day.moveGoal)) kcal",
            "exercise": "\(BarChart.format(day.exercise)) / \(BarChart.format(day.exerciseGoal)) min",
            "stand": "\(day.stand) / \(BarChart.format(day.standGoal)) h",
        ]
    }

    /// A month a table: weeks as rows, Monday first, a small set of rings per day with data.
    static func calendars(_ rings: [RingDay]) -> [[String: Any]] {
        let byDay = Dictionary(rings.map { ($0.day, $0) }, uniquingKeysWith: { a, _ in a })
        let months = Array(Set(rings.map { LocalMonth($0.day) })).sorted().suffix(12)
        return months.map { month in
            var weeks: [[[String: Any]]] = []
            var week: [[String: Any]] = []
            let firstDay = month.days.lowerBound
            // Monday = 0 (1970-01-01 was a Thursday).
            let lead = Int((firstDay.dayNumber + 3) % 7 + 7) % 7
            for _ in 0..<lead { week.append(["empty": true]) }
            var day = firstDay
            while day <= month.days.upperBound {
                var cell: [String: Any] = ["date": String(day.description.suffix(2))]
                if let r = byDay[day] {
                    cell["svg"] = RingGeometry.svg(day: day.description, move: fraction(r.move, r.moveGoal), exercise: fraction(r.exercise, r.exerciseGoal),
                                                   stand: fraction(Double(r.stand), r.standGoal), size: 36)
                }
                week.append(cell)
                if week.count == 7 {
                    weeks.append(week)
                    week = []
                }
                day = LocalDay(dayNumber: day.dayNumber + 1)
            }
            if !week.isEmpty { weeks.append(week) }
            return ["month": month.description, "weeks": weeks.map { ["days": $0] }]
        }
    }

    static func streaks(_ s: Streaks) -> [[String: Any]] {
        [("Move", s.move), ("Exercise", s.exercise), ("Stand", s.stand), ("All three", s.all)].map { name, streak in
            ["name": name, "current": streak.current, "longest": streak.longest,
             "longestSpan": streak.longestFrom.map { "\($0) – \(streak.longestTo?.description ?? "")" } ?? ""]
        }
    }

    /// The average of the last 90 days against the last 365, per ring and for steps.
    static func trends(_ figures: ReportFigures, rings: [RingDay], last: LocalDay) throws -> [[String: Any]] {
        func average(_ values: [Double]) -> Double? { values.isEmpty ? nil : values.reduce(0, +) / Double(values.count) }
        func window(_ days: Int64) -> [RingDay] { rings.filter { $0.day.dayNumber > last.dayNumber - days } }
        var rows: [(String, Double?, Double?, String)] = [
            ("Move", average(window(90).map(\.move)), average(window(365).map(\.move)), "kcal"),
            ("Exercise", average(window(90).map(\.exercise)), average(window(365).map(\.exercise)), "min"),
            ("Stand", average(window(90).map { Double($0.stand) }), average(window(365).map { Double($0.stand) }), "h"),
        ]
        let steps = try figures.summary("steps", .day, LocalDay(dayNumber: last.dayNumber - 364), last)
        func stepAverage(_ days: Int64) -> Double? {
            average(steps.filter { (LocalDay(parsing: $0.period)?.dayNumber ?? 0) > last.dayNumber - days }.map(\.value))
        }
        rows.append(("Steps", stepAverage(90), stepAverage(365), "steps"))
        return rows.compactMap { name, recent, year, unit in
            guard let recent, let year else { return nil }
            // Three per cent either way is a change; nothing against nothing is none.
            let arrow = recent > year * 1.03 && recent > year ? "↑" : recent < year * 0.97 ? "↓" : "→"
            return ["name": name, "recent": BarChart.format(recent), "year": BarChart.format(year), "unit": unit + " a day", "arrow": arrow,
                    "direction": arrow == "↑" ? "up" : arrow == "↓" ? "down" : "flat"]
        }
    }

    static func charts(_ figures: ReportFigures, from: LocalDay, to: LocalDay) throws -> [[String: Any]] {
        // `unit` is the one `summary` answers in (a count of steps or of stand hours is `count`);
        // `shown` is what the chart says.
        let metrics: [(name: String, metric: String, unit: String, shown: String, color: String)] = [
            ("Steps", "steps", "count", "steps", "#5ac8fa"), ("Active energy", "active-energy", "kcal", "kcal", "#fa114f"),
            ("Exercise", "exercise-time", "min", "min", "#92e82a"), ("Stand hours", "stand-hour", "count", "h", "#1eeaef"),
        ]
        return metrics.map { m in
            let periods: [(String, SummaryPeriod)] = [("Weekly", .week), ("Two-weekly", .twoWeeks), ("Monthly", .month)]
            let panels = periods.map { label, period -> [String: Any] in
                // One unit a chart: rows in a unit the normaliser does not know are left out.
                let rows = ((try? figures.summary(m.metric, period, from, to)) ?? []).filter { $0.unit == m.unit }
                let bars = rows.map { BarChart.Bar(label: Self.label(ofPeriod: $0.period, period), value: $0.value) }
                return ["period": label, "svg": BarChart.svg(bars, color: m.color, unit: m.shown)]
            }
            return ["name": m.name, "panels": panels]
        }
    }

    /// A period key as a chart's label: `W32` for a week, `Aug` for a month, the first day for two weeks.
    static func label(ofPeriod key: String, _ period: SummaryPeriod) -> String {
        switch period {
        case .week: return String(key.suffix(3))
        case .month:
            let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
            return Int(key.suffix(2)).flatMap { (1...12).contains($0) ? months[$0 - 1] : nil } ?? key
        case .twoWeeks: return String(key.prefix(10).suffix(5))
        case .day: return String(key.suffix(5))
        }
    }

    /// The last 30 nights with data in the range, however long before its end they were.
    static func sleep(_ figures: ReportFigures, from: LocalDay, to: LocalDay) throws -> [String: Any] {
        let nights = Array(try figures.nights(from, to).suffix(30))
        let stacks = nights.map { n in
            BarChart.Stack(label: String(n.night.description.suffix(5)), parts: [
                (n.deep / 60, "#3a2cbf"), (n.core / 60, "#5b8cff"), (n.rem / 60, "#49c7f5"),
                (max(n.asleep - n.deep - n.core - n.rem, 0) / 60, "#7f8cff"), (n.awake / 60, "#ff8a65"),
            ])
        }
        // No night, no count to give ("the last 0 nights" read as a fault).
        let heading = nights.isEmpty ? "" : nights.count == 1 ? ", the one night with data" : ", the last \(nights.count) nights with data"
        return ["svg": BarChart.svg(stacks, unit: "h"), "heading": heading,
                "span": nights.first.map { "\($0.night) to \(nights.last!.night)" } ?? ""]
    }

    static func workouts(_ figures: ReportFigures, from: LocalDay, to: LocalDay) throws -> [String: Any] {
        var minutes: [String: Double] = [:], counts: [String: Int] = [:]
        for row in try figures.workouts(from, to) {
            let name = ShortNames.short(for: row.type) ?? row.type
            minutes[name, default: 0] += row.minutes
            counts[name, default: 0] += row.count
        }
        let sorted = minutes.sorted { $0.value > $1.value }
        let bars = sorted.map { BarChart.Bar(label: $0.key, value: $0.value / 60) }
        return ["svg": BarChart.svg(bars, color: "#92e82a", unit: "h"),
                "rows": sorted.map { name, minutes in
                    let count = counts[name] ?? 0
                    return ["type": BarChart.escape(name), "count": count == 1 ? "1 workout" : "\(count) workouts", "hours": BarChart.format(minutes / 60)]
                }]
    }

    /// Each tracker's last 60 days as squares: success green, other levels orange, a level of
    /// unknown success (a bundle's) blue, no entry grey; with its streaks when known.
    static func trackers(_ figures: ReportFigures, to: LocalDay) throws -> [[String: Any]] {
        try figures.trackers(to).map { tracker in
            let from = LocalDay(dayNumber: to.dayNumber - 59)
            var svg = #"<svg class="strip" viewBox="0 0 600 14" width="100%" height="14" role="img">"#
            for i in 0..<60 {
                let day = LocalDay(dayNumber: from.dayNumber + Int64(i))
                let fill = tracker.days[day].map { success in success.map { $0 ? "#92e82a" : "#ff8a65" } ?? "#5ac8fa" } ?? "#333"
                svg += #"<rect x="\#(i * 10)" y="0" width="9" height="14" fill="\#(fill)"><title>\#(day)</title></rect>"#
            }
            svg += "</svg>"
            var row: [String: Any] = ["name": BarChart.escape(tracker.name), "svg": svg, "levels": BarChart.escape(tracker.levels)]
            if let streak = tracker.streak { row["trackerStreak"] = ["current": streak.current, "longest": streak.longest] }
            return row
        }
    }
}
