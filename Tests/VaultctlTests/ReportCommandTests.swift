import Foundation
import SyntheticHealth
import Testing

/// `vaultctl report` as a person opens it: a real headless Chromium (Debian's) loads the file
/// with the network off, the rings of a known day have the arc lengths their values give, and a
/// screenshot is written.
@Suite(.timeLimit(.minutes(10))) struct ReportCommandTests {
    static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Runs Chromium headless with every network request sent to a closed port and every name
    /// unresolvable; returns its stdout.
    func chromium(_ arguments: [String]) throws -> String {
        let binary = try #require(Self.chromium, "Debian's chromium is needed (scripts/ensure-deps.sh installs it)")
        // Its profile and its output in a directory of this run, removed after it; output to a
        // file, not a pipe, so that a Chromium that hangs is killed at the deadline, not waited for.
        let scratch = TemporaryDirectory("chromium")
        let outPath = scratch.file("stdout")
        try #require(FileManager.default.createFile(atPath: outPath, contents: nil))
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--proxy-server=http://127.0.0.1:9",
                             "--host-resolver-rules=MAP * ~NOTFOUND", "--user-data-dir=" + scratch.file("profile")] + arguments
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let ended = Deadline.wait(for: process, seconds: 180)
        try out.close()
        #expect(ended, "chromium \(arguments.last ?? "") did not end within 180 s")
        return String(decoding: try Data(contentsOf: URL(fileURLWithPath: outPath)), as: UTF8.self)
    }

    @Test func aReportLoadsOfflineAndItsRingsHaveTheArcsTheirValuesGive() throws {
        let dir = TemporaryDirectory()
        let cli = CLIRunner()
        let pass = dir.passphraseFile("pass", "report passphrase")
        let vault = dir.file("vault")
        func run(_ arguments: [String]) throws -> CLIRunner.Result {
            try cli.run(arguments + ["--vault", vault, "--passphrase-file", pass])
        }
        try makeVault(at: vault, passphraseFile: pass)
        let zip = dir.file("export.zip")
        try SyntheticExport.writeZip(to: zip, options: .init(days: 40, firstDay: (2024, 2, 1), tripStart: 100))
        #expect(try run(["import", zip]).status == 0)
        #expect(try run(["tracker", "add", "NoAlc", "--levels", "steady=0,wild=6", "--success", "steady"]).status == 0)
        #expect(try run(["track", "NoAlc", "steady", "--at", "2024-03-10 21:00"]).status == 0)

        let html = dir.file("report.html")
        let made = try run(["report", "--out", html])
        #expect(made.status == 0)
        let text = try String(contentsOfFile: html, encoding: .utf8)
        for outside in ["http://", "https://", "<script", "src=", "@import", "url("] { #expect(!text.contains(outside), "\(outside)") }
        #expect(text.contains("NoAlc"))
        #expect((try FileManager.default.attributesOfItem(atPath: html)[.posixPermissions] as? NSNumber)?.intValue == 0o600)

        // The last day's rings, from the read models, against the arcs Chromium laid out.
        let ringsJSON = try run(["rings", "--json"])
        let days = try #require(try JSONSerialization.jsonObject(with: Data(ringsJSON.stdout.utf8)) as? [[String: Any]])
        let last = try #require(days.last)
        let date = try #require(last["date"] as? String)
        let dom = try chromium(["--dump-dom", "file://" + html])
        #expect(dom.contains("Your health"))
        for (ring, value, goal, radius) in [("move", "move", "moveGoal", 80.0), ("exercise", "exercise", "exerciseGoal", 59.0), ("stand", "stand", "standGoal", 38.0)] {
            let fraction = (last[value] as? Double ?? 0) / (last[goal] as? Double ?? 1)
            let expected = (min(fraction, 1) * 2 * Double.pi * radius * 1000).rounded() / 1000
            let pattern = #"data-day="\#(date)" data-ring="\#(ring)" data-lap="1" cx="90" cy="90" r="\#(Int(radius))"[^>]*stroke-dasharray="([0-9.]+) "#
            let match = try #require(dom.range(of: pattern, options: .regularExpression), "\(ring) arc of \(date)")
            let dash = dom[match].split(separator: "\"").last.map(String.init) ?? ""
            #expect(Double(dash.split(separator: " ").first ?? "") == expected, "\(ring): \(dash) against \(expected)")
        }
        let screenshot = dir.file("report.png")
        _ = try chromium(["--screenshot=" + screenshot, "--window-size=1000,2000", "file://" + html])
        let png = try Data(contentsOf: URL(fileURLWithPath: screenshot))
        #expect(png.prefix(4) == Data([0x89, 0x50, 0x4E, 0x47]))
        // The IHDR chunk's width and height (big-endian at bytes 16 and 20): the window asked for.
        func word(_ at: Int) -> Int { png.dropFirst(at).prefix(4).reduce(0) { $0 << 8 | Int($1) } }
        #expect(word(16) == 1000 && word(20) == 2000, "\(word(16))×\(word(20))")

        // Plain text health data: never over a file, never inside the vault.
        #expect(try !FileManager.default.contentsOfDirectory(atPath: dir.path).contains { $0.hasPrefix(".report-") })
        #expect(try run(["report", "--out", html]).stderr.contains("already exists"))
        #expect(try run(["report", "--out", vault + "/report.html"]).stderr.contains("inside the vault directory"))
    }

    /// The researcher's report: a bundle of daily grants carries the rings with their goals,
    /// nights by stage and workouts per type, and `report --bundle` draws from them the rings,
    /// calendars and streaks the person's own report shows.
    @Test func aBundlesDailyLinesDrawTheSameRingsAsTheVault() throws {
        let dir = TemporaryDirectory()
        let cli = CLIRunner()
        let pass = dir.passphraseFile("pass", "report passphrase")
        let vault = dir.file("vault")
        func run(_ arguments: [String]) throws -> CLIRunner.Result {
            try cli.run(arguments + ["--vault", vault, "--passphrase-file", pass])
        }
        func json(_ arguments: [String]) throws -> [[String: Any]] {
            let result = try run(arguments + ["--json"])
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        }
        try makeVault(at: vault, passphraseFile: pass)
        let zip = dir.file("export.zip")
        try SyntheticExport.writeZip(to: zip, options: .init(days: 40, firstDay: (2024, 2, 1), tripStart: 100))
        #expect(try run(["import", zip]).status == 0)
        #expect(try run(["goals", "set", "move", "450", "--from", "2024-02-20"]).status == 0)
        #expect(try run(["tracker", "add", "NoAlc", "--levels", "steady=0,wild=6", "--success", "steady"]).status == 0)
        #expect(try run(["track", "NoAlc", "wild", "--at", "2024-03-01 21:00"]).status == 0)
        #expect(try cli.run(["keygen", "--out", dir.file("lab")]).status == 0)
        #expect(try run(["recipient", "add", "lab", "--key", dir.file("lab.pub")]).status == 0)
        #expect(try run(["grant", "lab", "--categories", "activity,sleep,workouts,trackers", "--granularity", "daily",
                         "--from", "2024-02-05", "--to", "2024-03-05"]).status == 0)
        #expect(try run(["export", "lab", "--out", dir.file("lab.bundle")]).status == 0)
        let fingerprint = try #require(try JSONSerialization.jsonObject(with: Data(try run(["identity", "--json"]).stdout.utf8)) as? [String: String])["fingerprint"]
        let opened = dir.file("opened")
        #expect(try cli.run(["bundle", "open", dir.file("lab.bundle"), "--key", dir.file("lab.key"), "--out", opened,
                             "--expect-sender", fingerprint!]).status == 0)

        // The derived lines are the figures `rings`, `sleep` and `workouts` show, inside the period only.
        func lines(_ category: String) throws -> [[String: Any]] {
            try String(contentsOfFile: opened + "/data/\(category).ndjson", encoding: .utf8).split(separator: "\n").map {
                try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            }
        }
        let activity = try lines("activity")
        let rings = try json(["rings", "--from", "2024-02-05", "--to", "2024-03-05"])
        #expect(rings.count == 30)
        for ring in rings {
            let date = ring["date"] as! String
            // `rings --json` rounds move to a tenth and exercise to a minute; bundles keep a millionth.
            for (name, unit, step) in [("move", "kcal", 10.0), ("exercise", "min", 1), ("stand", "h", 1)] {
                let line = activity.first { $0["metric"] as? String == "ring:" + name && $0["period"] as? String == date }
                let shipped = try #require(line?["value"] as? Double, "\(name) \(date)")
                #expect((shipped * step).rounded() / step == ring[name] as? Double && line?["unit"] as? String == unit, "\(name) \(date)")
                let goal = activity.first { $0["metric"] as? String == "goal:" + name && $0["period"] as? String == date }
                #expect(goal?["value"] as? Double == ring[name + "Goal"] as? Double, "\(name) goal \(date)")
            }
        }
        #expect(activity.filter { ($0["metric"] as! String).hasPrefix("ring:") }.count == 90)
        #expect(activity.first { $0["metric"] as? String == "goal:move" && $0["period"] as? String == "2024-02-20" }?["value"] as? Double == 450)
        let nights = try json(["sleep", "--from", "2024-02-05", "--to", "2024-03-05"])
        let sleep = try lines("sleep").filter { ($0["metric"] as! String).hasPrefix("sleep:") }
        #expect(!nights.isEmpty && sleep.count == nights.count * 6)
        for night in nights {
            for stage in ["inBed", "asleep", "core", "deep", "rem", "awake"] {
                let line = sleep.first { $0["metric"] as? String == "sleep:" + stage && $0["period"] as? String == night["night"] as? String }
                // `sleep --json` gives minutes to a thousandth, bundles to a millionth.
                let shipped = try #require(line?["value"] as? Double, "\(stage) of \(night["night"]!)")
                #expect((shipped * 1000).rounded() / 1000 == night[stage] as? Double, "\(stage) of \(night["night"]!)")
            }
        }
        let workouts = try json(["workouts", "--by", "day", "--from", "2024-02-05", "--to", "2024-03-05"])
        let workoutLines = try lines("workouts").filter { ($0["metric"] as! String).hasPrefix("workout:") }
        #expect(!workouts.isEmpty && workoutLines.count == workouts.count)
        let shippedWorkouts: Int = workoutLines.map { $0["samples"] as! Int }.reduce(0, +)
        let countedWorkouts: Int = workouts.map { $0["count"] as! Int }.reduce(0, +)
        #expect(shippedWorkouts == countedWorkouts)

        // The researcher's report: the rings of the bundle's last day, as the vault's report draws them.
        let html = dir.file("bundle.html")
        let made = try cli.run(["report", "--bundle", opened, "--out", html])
        #expect(made.status == 0, "\(made.stderr)")
        let text = try String(contentsOfFile: html, encoding: .utf8)
        for outside in ["http://", "https://", "<script", "src=", "url("] { #expect(!text.contains(outside), "\(outside)") }
        #expect(text.contains("Shared health data") && text.contains(fingerprint!))
        let own = dir.file("own.html")
        #expect(try run(["report", "--out", own, "--from", "2024-02-05", "--to", "2024-03-05"]).status == 0)
        let ownText = try String(contentsOfFile: own, encoding: .utf8)
        func section(_ text: String, _ from: String, _ to: String) -> Substring? {
            guard let a = text.range(of: from), let b = text.range(of: to, range: a.upperBound..<text.endIndex) else { return nil }
            return text[a.lowerBound..<b.lowerBound]
        }
        // Rings and month calendars: the same SVG from either side (streaks differ: the vault's
        // run on past the period the bundle holds).
        let shared = try #require(section(text, "<h2>Rings</h2>", "<h2>Streaks"))
        #expect(shared == section(ownText, "<h2>Rings</h2>", "<h2>Streaks"))
        #expect(shared.contains("data-day=\"2024-03-05\"") && !shared.contains("data-day=\"2024-03-06\""))
        #expect(section(text, "<h2>Sleep", "<h2>Workouts") == section(ownText, "<h2>Sleep", "<h2>Workouts"))
        #expect(section(text, "<h2>Workouts", "<h2>Trackers") == section(ownText, "<h2>Workouts", "<h2>Trackers"))
        // The tracker's strip ends on the bundle's last day, its logged day drawn.
        #expect(text.contains("NoAlc") && text.contains("fill=\"#5ac8fa\"><title>2024-03-01</title>"))
        let dom = try chromium(["--dump-dom", "file://" + html])
        #expect(dom.contains("Shared health data"))

        // A bundle of raw lines has nothing daily to draw; a folder that is no bundle is named.
        #expect(try run(["grant", "lab", "--categories", "heart", "--granularity", "raw", "--from", "2024-02-05", "--to", "2024-02-06"]).status == 0)
        #expect(try run(["revoke", "lab", "--categories", "activity,sleep,workouts,trackers"]).status == 0)
        #expect(try run(["export", "lab", "--out", dir.file("raw.bundle")]).status == 0)
        #expect(try cli.run(["bundle", "open", dir.file("raw.bundle"), "--key", dir.file("lab.key"), "--out", dir.file("raw"),
                             "--expect-sender", fingerprint!]).status == 0)
        let refused = try cli.run(["report", "--bundle", dir.file("raw"), "--out", dir.file("raw.html")])
        #expect(refused.status != 0 && refused.stderr.contains("holds no daily lines"))
        let notABundle = try cli.run(["report", "--bundle", dir.path, "--out", dir.file("none.html")])
        #expect(notABundle.status != 0 && notABundle.stderr.contains("manifest.json"))
        #expect(!FileManager.default.fileExists(atPath: dir.file("raw.html")) && !FileManager.default.fileExists(atPath: dir.file("none.html")))
    }

    @Test func textFromTheVaultCannotBecomeMarkupAndHugeValuesDoNotStopTheReport() throws {
        let dir = TemporaryDirectory()
        let cli = CLIRunner()
        let pass = dir.passphraseFile("pass", "report passphrase")
        func run(_ arguments: [String]) throws -> CLIRunner.Result {
            try cli.run(arguments + ["--vault", dir.file("vault"), "--passphrase-file", pass])
        }
        try makeVault(at: dir.file("vault"), passphraseFile: pass)
        // A prepend character joins the `<` after it into one grapheme cluster.
        let name = "\u{0D4E}<b>x"
        #expect(try run(["tracker", "add", name, "--levels", "\u{0D4E}<i>=1", "--success", "\u{0D4E}<i>"]).status == 0)
        #expect(try run(["track", name, "\u{0D4E}<i>", "--at", "2024-03-10 21:00"]).status == 0)
        let csv = dir.file("huge.csv")
        try Data("""
            type,start,end,value,unit,source
            HKQuantityTypeIdentifierActiveEnergyBurned,2024-03-10T08:00:00+00:00,2024-03-10T09:00:00+00:00,9e11,kcal,Phone

            """.utf8).write(to: URL(fileURLWithPath: csv))
        #expect(try run(["import", csv]).status == 0)
        let html = dir.file("report.html")
        let made = try run(["report", "--out", html, "--from", "2024-03-01", "--to", "2024-03-31"])
        #expect(made.status == 0, "\(made.stderr)")
        let text = try String(contentsOfFile: html, encoding: .utf8)
        #expect(!text.contains("<b>") && !text.contains("<i>"))
        #expect(text.contains("&lt;b&gt;x"))
    }

    /// Days since 1970-01-01 of a calendar date.
    static func dayNumber(_ year: Int, _ month: Int, _ day: Int) -> Int64 {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return Int64(calendar.date(from: DateComponents(year: year, month: month, day: day))!.timeIntervalSince1970 / 86_400)
    }

    /// The section of a report's DOM under the heading `title` (to the next `<h2>`).
    static func section(_ dom: String, _ title: String) -> String? {
        guard let start = dom.range(of: "<h2>\(title)") else { return nil }
        let rest = dom[start.upperBound...]
        return String(rest[..<(rest.range(of: "<h2>")?.lowerBound ?? rest.endIndex)])
    }

    /// Bar heights in an SVG chart, in drawing order (one `rect` a bar, or a part of a stacked bar).
    static func rects(_ svg: String) -> [(x: Double, height: Double)] {
        let pattern = try! NSRegularExpression(pattern: #"<rect x="([0-9.]+)" y="[0-9.]+" width="[0-9.]+" height="([0-9.]+)""#)
        return pattern.matches(in: svg, range: NSRange(svg.startIndex..., in: svg)).map { match in
            (Double(svg[Range(match.range(at: 1), in: svg)!])!, Double(svg[Range(match.range(at: 2), in: svg)!])!)
        }
    }

    /// Every panel of a report is drawn from the data in its range, checked against the
    /// generator's own truth (not the importer's): an export that ended over a year ago, drawn
    /// without `--from`/`--to`, gives the year up to its last day; each chart's weekly, two-weekly
    /// and monthly bars have the heights the true totals give (the tallest bar is the largest
    /// total); every month's calendar has a ring per day; the sleep chart the last 30 nights;
    /// the workouts their count. Issue 36: the steps and stand charts were empty for everyone.
    @Test(.timeLimit(.minutes(10))) func everyPanelDrawsTheDataInItsRange() throws {
        let vault = try CLIVault()
        let run = vault.run
        // 2021-03-01 (a Monday) to 2021-06-28: 120 days, 18 ISO weeks, four months.
        let export = vault.file("export.zip")
        let truth = try SyntheticExport.writeZip(to: export, options: .init(days: 120, firstDay: (2021, 3, 1), tripStart: 200))
        #expect(try run(["import", export]).status == 0)
        // Habits logged after the data's last day: the strip runs to the last entry, not to today.
        #expect(try run(["tracker", "add", "NoAlc", "--levels", "steady=0,wild=6", "--success", "steady"]).status == 0)
        for (day, level) in [("2021-06-27", "steady"), ("2021-06-29", "steady"), ("2021-06-30", "wild"), ("2021-07-02", "steady")] {
            #expect(try run(["track", "NoAlc", level, "--at", day + " 21:00"]).status == 0)
        }
        // Sets in the last two weeks (2021-06-15 to 2021-06-28): two of push-ups, one of squats.
        for (exercise, at) in [("push-ups", "2021-06-20 07:00"), ("push-ups", "2021-06-27 07:00"), ("squats", "2021-06-28 23:50")] {
            #expect(try run(["practice", exercise, "--reps", "10", "--at", at]).status == 0)
        }
        let html = vault.file("report.html")
        let made = try run(["report", "--out", html])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdout.contains("2020-06-29 to 2021-06-28 (the year to the last day with data;"), "\(made.stdout)")
        let dom = try chromium(["--dump-dom", "file://" + html])

        let first = Self.dayNumber(2021, 3, 1)
        let days = (0..<120).map { first + Int64($0) }
        try Self.checkChartsAndCalendars(dom, truth: truth, days: days)
        #expect(Self.section(dom, "Months")?.components(separatedBy: "<caption>").dropFirst().map { String($0.prefix(7)) }
                == ["2021-03", "2021-04", "2021-05", "2021-06"])
        // Sleep: the last 30 nights with data, each a stack (one x per night), heights of the truth.
        let sleep = try #require(Self.section(dom, "Sleep"))
        #expect(sleep.contains("the last 30 nights with data") && sleep.contains("2021-05-30 to 2021-06-28"))
        #expect(Set(Self.rects(sleep).map(\.x)).count == 30)
        #expect(sleep.contains("deep") && sleep.contains("REM") && sleep.contains("awake"))
        // Workouts: the runs of the range, counted by the generator.
        let runs = days.reduce(0) { $0 + (truth.days[$1]?.workouts ?? 0) }
        let workouts = try #require(Self.section(dom, "Workouts by type"))
        #expect(runs > 0 && workouts.contains(runs == 1 ? ">1 workout<" : ">\(runs) workouts<"), "\(runs) runs")
        #expect(Self.rects(workouts).count == 1)
        let trends = try #require(Self.section(dom, "Trends"))
        #expect(trends.contains("steps a day"))
        try Self.checkTraining(dom, truth: truth)
        // The strip's 60 days end on 2021-07-02: three successes (green), one other level (orange).
        let trackers = try #require(Self.section(dom, "Trackers"))
        #expect(trackers.components(separatedBy: ##"fill="#92e82a""##).count - 1 == 3)
        #expect(trackers.components(separatedBy: ##"fill="#ff8a65""##).count - 1 == 1)
        #expect(trackers.contains("<title>2021-07-02</title></rect></svg>"))
    }

    /// The training section: the last two weeks' figures, and the last bar of the two-weekly
    /// body-part and motion panels, stacked to the full height in the shares the three sets and
    /// the generator's runs (legs, endurance) give.
    static func checkTraining(_ dom: String, truth: SyntheticExport.Summary) throws {
        let training = try #require(section(dom, "Training"))
        let runs = (0..<14).reduce(0) { $0 + (truth.days[dayNumber(2021, 6, 15) + Int64($1)]?.workouts ?? 0) }
        #expect(runs > 0)
        #expect(training.contains("Last two weeks (2021-06-15..2021-06-28): 3 sets, 30 repetitions, \(runs) workouts"), "\(runs) runs")
        func lastBar(_ panel: String) throws -> [Double] {
            let start = try #require(training.range(of: panel + "</div>"), "no panel \(panel)")
            let svg = training[start.upperBound...]
            let chart = String(svg[..<(svg.range(of: "</svg>")?.upperBound ?? svg.endIndex)])
            let rects = rects(chart)
            let last = try #require(rects.map(\.x).max())
            return rects.filter { $0.x == last }.map(\.height)
        }
        // 116 px is a whole bar (160 less the margins): chest and arms half a push-up set each, legs the squats and the runs.
        let items = Double(3 + runs)
        let parts = try lastBar("Two-weekly, body parts")
        let expectedParts = [1 / items, 1 / items, Double(1 + runs) / items].map { $0 * 116 }
        #expect(parts.count == 3 && zip(parts, expectedParts).allSatisfy { abs($0 - $1) < 0.01 }, "\(parts) against \(expectedParts)")
        let motion = try lastBar("Two-weekly, motion")
        let expectedMotion = [3 / items, Double(runs) / items].map { $0 * 116 }
        #expect(motion.count == 2 && zip(motion, expectedMotion).allSatisfy { abs($0 - $1) < 0.01 }, "\(motion) against \(expectedMotion)")
        // Weekly and monthly panels too, one bar a period with a run or a set.
        for panel in ["Weekly, body parts", "Monthly, body parts", "Weekly, motion", "Monthly, motion"] {
            #expect(training.contains(panel + "</div><svg"), "\(panel) is not drawn")
        }
    }

    /// The chart panels and month calendars of a report's DOM against the generator's truth for
    /// `days` (the report's range holds them all): each chart's weekly (ISO weeks), two-weekly
    /// (fourteen days ending on the last) and monthly bars, one per period with data, as tall
    /// against the tallest as its true total against the largest; a ring per day in each month.
    static func checkChartsAndCalendars(_ dom: String, truth: SyntheticExport.Summary, days: [Int64]) throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        func month(_ day: Int64) -> Int {
            let parts = calendar.dateComponents([.year, .month], from: Date(timeIntervalSince1970: Double(day) * 86_400))
            return parts.year! * 12 + parts.month!
        }
        let last = days.max()!
        func periods(_ key: (Int64) -> Int64) -> [[Int64]] {
            Dictionary(grouping: days, by: key).sorted { $0.key < $1.key }.map(\.value)
        }
        let weekly = periods { $0 - (($0 + 3) % 7 + 7) % 7 }
        let twoWeekly = periods { -((last - $0) / 14) }
        let monthly = periods { Int64(month($0)) }
        let figures: [(title: String, value: (SyntheticExport.DayTruth) -> Double)] = [
            ("Steps", { Double($0.steps) }), ("Active energy", { $0.activeEnergy }),
            ("Exercise", { Double($0.exerciseMinutes) }), ("Stand hours", { Double($0.standHours) }),
        ]
        for figure in figures {
            let section = try #require(Self.section(dom, figure.title), "no \(figure.title) section")
            #expect(!section.contains("no data in this range"), "\(figure.title)")
            let panels = section.components(separatedBy: "<svg").dropFirst().map { String($0) }
            #expect(panels.count == 3, "\(figure.title): \(panels.count) panels")
            for (panel, periods) in zip(panels, [weekly, twoWeekly, monthly]) {
                let totals = periods.map { $0.reduce(0) { sum, n in sum + (truth.days[n].map(figure.value) ?? 0) } }
                let bars = Self.rects(panel).map(\.height)
                #expect(bars.count == totals.count, "\(figure.title): \(bars.count) bars for \(totals.count) periods")
                guard bars.count == totals.count, let tallest = bars.max(), let largest = totals.max(), largest > 0 else { continue }
                for (bar, total) in zip(bars, totals) {
                    #expect(abs(bar / tallest - total / largest) < 0.002, "\(figure.title): a bar of \(bar) against a total of \(total)")
                }
            }
        }
        let months = try #require(Self.section(dom, "Months"))
        let tables = months.components(separatedBy: "<caption>").dropFirst()
        let daysPerMonth = periods { Int64(month($0)) }.suffix(12).map(\.count)
        #expect(tables.map { $0.components(separatedBy: "data-ring=\"move\" data-lap=\"1\"").count - 1 } == Array(daysPerMonth))
    }

    /// The README's screenshot's vault: the year `vaultbench generate` writes, and the habit the
    /// README logs. Every panel of its report is drawn (issue 36: the steps chart of the picture
    /// had long been empty for everyone while every test passed).
    @Test(.timeLimit(.minutes(10))) func theREADMEScreenshotsVaultDrawsEveryPanel() throws {
        let vault = try CLIVault()
        let run = vault.run
        let export = vault.file("export.zip")
        let truth = try SyntheticExport.writeZip(to: export)
        #expect(try run(["import", export]).status == 0)
        #expect(try run(["tracker", "add", "NoAlc", "--levels", "steady=0,easy=4,wild=6", "--success", "steady", "--day-starts", "04:00"]).status == 0)
        for day in 20...30 { #expect(try run(["track", "NoAlc", "steady", "--at", "2024-12-\(day) 21:00"]).status == 0) }
        #expect(try run(["track", "NoAlc", "wild", "--at", "2024-12-31 21:00"]).status == 0)
        let html = vault.file("report.html")
        let made = try run(["report", "--out", html])
        #expect(made.status == 0 && made.stdout.contains("2024-01-01 to 2024-12-30"), "\(made.stdout) \(made.stderr)")
        let dom = try chromium(["--dump-dom", "file://" + html])
        let first = Self.dayNumber(2024, 1, 1)
        let days = (0..<365).map { first + Int64($0) }
        try Self.checkChartsAndCalendars(dom, truth: truth, days: days)
        let sleep = try #require(Self.section(dom, "Sleep"))
        #expect(sleep.contains("the last 30 nights with data") && Set(Self.rects(sleep).map(\.x)).count == 30)
        let runs = days.reduce(0) { $0 + (truth.days[$1]?.workouts ?? 0) }
        #expect(Self.section(dom, "Workouts by type")?.contains(">\(runs) workouts<") == true, "\(runs) runs")
        let trackers = try #require(Self.section(dom, "Trackers"))
        #expect(trackers.components(separatedBy: ##"fill="#92e82a""##).count - 1 == 11)
        #expect(trackers.components(separatedBy: ##"fill="#ff8a65""##).count - 1 == 1)
    }
}
