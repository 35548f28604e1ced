import Foundation
import HealthModel
@testable import Projections
@testable import Report
import Testing

/// The report drawn from figures made by hand, without a vault: every panel shows exactly the
/// figures it was given, asks for exactly the report's range, and puts no text in as markup.
@Suite struct HandMadeFiguresReportTests {
    static let first = LocalDay(year: 2024, month: 3, day: 4)  // a Monday
    static let last = LocalDay(year: 2024, month: 3, day: 17)

    /// What the figures' closures were asked for.
    final class Asked: @unchecked Sendable {
        var summaries: [String] = []
        var ranges: Set<String> = []
    }

    static func figures(_ asked: Asked) -> ReportFigures {
        let rings = (0..<14).map { i in
            let day = LocalDay(dayNumber: first.dayNumber + Int64(i))
            return RingDay(day: day, move: i == 13 ? 600 : 250, moveGoal: 500, exercise: 45, exerciseGoal: 30, stand: 12, standGoal: 12)
        }
        var streaks = Streaks(days: [])
        streaks.move = Streak(current: 1, longest: 1, currentFrom: last, currentTo: last, longestFrom: last, longestTo: last)
        streaks.exercise = Streak(current: 14, longest: 14, longestFrom: first, longestTo: last)
        streaks.stand = Streak(current: 14, longest: 14, longestFrom: first, longestTo: last)
        streaks.all = Streak(current: 1, longest: 1, longestFrom: last, longestTo: last)
        let strip: [LocalDay: Bool?] = [last: true, LocalDay(dayNumber: last.dayNumber - 1): false, LocalDay(dayNumber: last.dayNumber - 2): nil as Bool?]
        let twoWeeks = TrainingPeriod(period: "2024-03-04..2024-03-17", sets: 3, repetitions: 30, minutes: 12, workouts: 2,
                                      bodyParts: ["chest": 0.25, "legs": 0.75], motion: ["strength": 0.4, "endurance": 0.6])
        return ReportFigures(
            rings: rings, lastDay: last, streaks: streaks,
            summary: { metric, period, from, to in
                asked.summaries.append("\(metric) \(period.rawValue)")
                asked.ranges.insert("\(from)..\(to)")
                switch (metric, period) {
                case ("steps", .week): return [.init(period: "2024-W10", value: 70_000, unit: "count"), .init(period: "2024-W11", value: 35_000, unit: "count")]
                // A unit the chart does not draw in: left out, not mixed in.
                case ("active-energy", .week): return [.init(period: "2024-W10", value: 9_000, unit: "kJ")]
                default: return []
                }
            },
            nights: { from, to in
                asked.ranges.insert("\(from)..\(to)")
                return [.init(night: LocalDay(year: 2024, month: 3, day: 16), asleep: 420, core: 240, deep: 60, rem: 90, awake: 30)]
            },
            workouts: { from, to in
                asked.ranges.insert("\(from)..\(to)")
                return [("HKWorkoutActivityTypeRunning", 2, 90), ("HKWorkoutActivityTypeYoga", 1, 30)]
            },
            training: { period, from, to in
                asked.ranges.insert("\(from)..\(to)")
                return period == .twoWeeks ? [twoWeeks] : []
            },
            trackers: { _ in
                [.init(name: "No <b>alc</b>", levels: "steady & wild", days: strip,
                       streak: (current: 1, longest: 3))]
            },
            lastTrackerDay: last, goalsKnown: true)
    }

    static func section(_ html: String, _ heading: String) -> String? {
        html.components(separatedBy: "<h2>").first { $0.hasPrefix(heading) }
    }

    static func attribute(_ name: String, in text: Substring) -> String? {
        guard let start = text.range(of: name + "=\"") else { return nil }
        return String(text[start.upperBound...].prefix { $0 != "\"" })
    }

    /// The rect heights of an SVG's bars (the plot is 116 units high).
    static func heights(_ svg: String) -> [Double] {
        svg.components(separatedBy: "<rect ").dropFirst().compactMap { attribute("height", in: Substring($0)).flatMap(Double.init) }
    }

    @Test func everyPanelShowsTheFiguresItWasGiven() throws {
        let asked = Asked()
        let rendered = try HealthReport.render(vaultFigures: Self.figures(asked), now: Date(timeIntervalSince1970: 1_750_000_000))
        let html = rendered.html
        // The year to the last day with data; every closure asked for that range alone (the
        // trends' steps for the 365 days to it).
        #expect(rendered.first == LocalDay(year: 2023, month: 3, day: 19) && rendered.last == Self.last)
        #expect(asked.ranges == ["2023-03-19..2024-03-17"], "\(asked.ranges)")
        #expect(asked.summaries.sorted() == ["active-energy 2weeks", "active-energy month", "active-energy week", "exercise-time 2weeks",
                                             "exercise-time month", "exercise-time week", "stand-hour 2weeks", "stand-hour month",
                                             "stand-hour week", "steps 2weeks", "steps day", "steps month", "steps week"])

        // Rings: the last day's move past its goal (a full lap and a fifth more), exercise 1.5
        // laps, stand one; radii 80, 59 and 38 in a 180-unit square with 20-unit strokes.
        let rings = try #require(Self.section(html, "Rings"))
        #expect(rings.contains("Move 600 / 500 kcal") && rings.contains("Exercise 45.0 / 30.0 min") && rings.contains("Stand 12 / 12.0 h"), "\(rings)")
        for (ring, radius, laps) in [("move", 80.0, [1.0, 0.2]), ("exercise", 59.0, [1.0, 0.5]), ("stand", 38.0, [1.0])] {
            let arcs = rings.components(separatedBy: "data-ring=\"\(ring)\"").dropFirst()
            let dashes = arcs.compactMap { Self.attribute("stroke-dasharray", in: Substring($0))?.split(separator: " ").compactMap { Double($0) } }
            #expect(dashes.count == laps.count, "\(ring)")
            for (dash, lap) in zip(dashes, laps) {
                #expect(abs(dash[0] - lap * 2 * .pi * radius) < 0.001 && abs(dash[1] - 2 * .pi * radius) < 0.001, "\(ring) \(dash)")
            }
        }

        let months = try #require(Self.section(html, "Months"))
        #expect(months.components(separatedBy: "<caption>").count == 2 && months.contains("<caption>2024-03</caption>"))
        #expect(months.components(separatedBy: "<svg class=\"rings\"").count - 1 == 14)
        // March 2024 begins on a Friday: four empty cells lead its first week.
        #expect(months.contains("<tr><td></td><td></td><td></td><td></td><td><br>01</td>"))

        let streaks = try #require(Self.section(html, "Streaks"))
        #expect(streaks.contains("<td>Exercise</td><td>14 days</td><td>14 days</td><td class=\"muted\">2024-03-04 – 2024-03-17</td>"))
        #expect(streaks.contains("<td>All three</td><td>1 days</td><td>1 days</td>"))

        // Trends: rings only (no daily steps were given), the 90 and 365 days alike.
        let trends = try #require(Self.section(html, "Trends"))
        #expect(trends.contains("<td>Move</td><td>275 kcal a day</td><td>275 kcal a day</td><td class=\"flat\">→</td>"))
        #expect(!trends.contains("Steps"))

        // Steps: two weekly bars, the second half the first; the other periods had none.
        let steps = try #require(Self.section(html, "Steps"))
        let weekly = try #require(steps.components(separatedBy: "<div class=\"muted\">").first { $0.hasPrefix("Weekly") })
        #expect(Self.heights(weekly) == [116, 58] && weekly.contains("W10") && weekly.contains("W11") && weekly.contains("70000 steps"))
        #expect(steps.components(separatedBy: "no data in this range").count - 1 == 2)
        let energy = try #require(Self.section(html, "Active energy"))
        #expect(energy.components(separatedBy: "no data in this range").count - 1 == 3)

        // Sleep: one night, stacked deep 1 h, core 4 h, REM 1.5 h, stage unknown 0.5 h, awake 0.5 h.
        let sleep = try #require(Self.section(html, "Sleep"))
        #expect(sleep.hasPrefix("Sleep, the one night with data") && sleep.contains("2024-03-16 to 2024-03-16"))
        let stack = Self.heights(sleep)
        #expect(stack.count == 5 && zip(stack, [1, 4, 1.5, 0.5, 0.5].map { $0 / 7.5 * 116 }).allSatisfy { abs($0 - $1) < 0.001 }, "\(stack)")

        let workouts = try #require(Self.section(html, "Workouts by type"))
        #expect(workouts.contains("<td>running</td><td>2 workouts</td><td>1.5 h</td>") && workouts.contains("<td>yoga</td><td>1 workout</td><td>0.5 h</td>"), "\(workouts)")
        #expect(zip(Self.heights(workouts), [116, 116.0 / 3]).allSatisfy { abs($0 - $1) < 0.001 } && Self.heights(workouts).count == 2)

        let training = try #require(Self.section(html, "Training"))
        #expect(training.contains("Last two weeks (2024-03-04..2024-03-17): 3 sets, 30 repetitions, 2 workouts, 12.0 min"), "\(training)")
        #expect(training.contains("body parts: legs 75.0 %, chest 25.0 %; motion: endurance 60.0 %, strength 40.0 %"))

        // Trackers: the name and levels as text, never markup; 60 squares, one of each colour
        // given, the rest grey.
        let trackers = try #require(Self.section(html, "Trackers"))
        #expect(trackers.contains("<h3>No &lt;b&gt;alc&lt;/b&gt; <span class=\"muted\">(steady &amp; wild); current streak 1 days, longest 3</span></h3>"), "\(trackers)")
        #expect(!html.contains("<b>alc"))
        for (color, count) in [("#92e82a", 1), ("#ff8a65", 1), ("#5ac8fa", 1), ("#333", 57)] {
            #expect(trackers.components(separatedBy: "fill=\"\(color)\"").count - 1 == count, "\(color)")
        }
    }

    /// Values a chart cannot scale by: nothing finite to draw, a huge figure, a bar of zero.
    @Test func barChartsDrawOnlyWhatTheyCanScale() {
        #expect(BarChart.svg([], color: "#000", unit: "h") == "<p class=\"empty\">no data in this range</p>")
        let svg = BarChart.svg([.init(label: "a", value: 4), .init(label: "b", value: 0), .init(label: "<c>", value: 1)], color: "#000", unit: "h")
        #expect(Self.heights(svg) == [116, 29])
        #expect(svg.contains("<title>&lt;c&gt;</title>") && !svg.contains("<c>"))
        #expect([1_234.56, 12.34, -0.05, .infinity, .nan, 1e20].map(BarChart.format) == ["1235", "12.3", "-0.1", "–", "–", "1e+20"])
    }
}
