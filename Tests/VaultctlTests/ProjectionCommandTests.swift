import Foundation
import SyntheticHealth
import Testing

/// The read commands as scripts use them, and a real process killed while it imports.
@Suite(.timeLimit(.minutes(10))) struct ProjectionCommandTests {
    let cli = CLIRunner()

    final class Setup {
        let dir = TemporaryDirectory("projection-cli")
        let vault: String
        let pass: String
        let zip: String
        /// The generator's own figures per local day number.
        let truth: [Int64: SyntheticExport.DayTruth]

        init(days: Int = 10) throws {
            vault = dir.path + "/vault"
            pass = dir.passphraseFile("pass", "projection test passphrase")
            zip = dir.path + "/export.zip"
            truth = try SyntheticExport.writeZip(to: zip, options: .init(days: days, firstDay: (2024, 3, 27), tripStart: 2)).days
        }

        func args(_ command: [String]) -> [String] { command + ["--vault", vault, "--passphrase-file", pass] }
    }

    private func json(_ result: CLIRunner.Result) throws -> Any {
        #expect(result.status == 0, "\(result.stderr)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
    }

    @Test func readCommandsPrintTheSpecsJSON() throws {
        let s = try Setup()
        try makeVault(at: s.vault, passphraseFile: s.pass)
        #expect(try cli.run(s.args(["import", s.zip])).status == 0)

        let rings = try #require(try json(cli.run(s.args(["rings", "--json", "--compare", "--from", "2024-03-28", "--to", "2024-03-30"]))) as? [[String: Any]])
        #expect(rings.map { $0["date"] as? String } == ["2024-03-28", "2024-03-29", "2024-03-30"])
        for key in ["move", "moveGoal", "exercise", "exerciseGoal", "stand", "standGoal", "appleMove", "appleExercise", "appleStand"] {
            #expect(rings.allSatisfy { $0[key] is NSNumber }, "\(key)")
        }
        // The figures the generator wrote for those days, as the Health app shows them (its kcal
        // within half of one, as VaultProjectionTests has them: it adds a run's energy unrounded,
        // the export holds each sample's to the thousandth).
        let dayFormat = ISO8601DateFormatter()
        dayFormat.formatOptions = [.withFullDate]
        for ring in rings {
            let date = ring["date"] as! String
            let truth = try #require(s.truth[Int64(dayFormat.date(from: date)!.timeIntervalSince1970 / 86_400)], "\(date)")
            #expect(abs((ring["move"] as! NSNumber).doubleValue - truth.activeEnergy) <= 0.5, "\(date) move")
            #expect((ring["exercise"] as! NSNumber).doubleValue == Double(truth.exerciseMinutes), "\(date) exercise")
            #expect((ring["stand"] as! NSNumber).intValue == truth.standHours, "\(date) stand")
            #expect((ring["moveGoal"] as! NSNumber).doubleValue == Double(truth.moveGoal), "\(date) move goal")
        }

        let weeks = try #require(try json(cli.run(s.args(["summary", "steps", "--by", "week", "--json"]))) as? [[String: Any]])
        #expect(weeks.map { $0["period"] as? String } == ["2024-W13", "2024-W14"])
        #expect(weeks.allSatisfy { $0["unit"] as? String == "count" && ($0["samples"] as? Int ?? 0) > 0 && $0["min"] == nil })
        let heart = try #require(try json(cli.run(s.args(["summary", "heart-rate", "--by", "month", "--json"]))) as? [[String: Any]])
        #expect(heart.allSatisfy { $0["min"] is NSNumber && $0["max"] is NSNumber })

        let streaks = try #require(try json(cli.run(s.args(["streaks", "--json"]))) as? [String: [String: Any]])
        #expect(Set(streaks.keys) == ["move", "exercise", "stand", "all"])
        // Worked out here from every day's rings as `rings --json` lists them: a ring is closed when
        // its value, rounded, reaches the goal; a run breaks on a day not closed or missing; the
        // current run ends on the last day.
        let days = try #require(try json(cli.run(s.args(["rings", "--json"]))) as? [[String: Any]])
        func closed(_ day: [String: Any], _ ring: String) -> Bool {
            let value = (day[ring] as! NSNumber).doubleValue, goal = (day[ring + "Goal"] as! NSNumber).doubleValue
            return (ring == "stand" ? value : value.rounded()) >= goal
        }
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withFullDate]
        let dates = days.map { Int(format.date(from: $0["date"] as! String)!.timeIntervalSince1970 / 86_400) }
        #expect(dates == Array(dates.first!...dates.last!), "consecutive days")
        for ring in ["move", "exercise", "stand", "all"] {
            let flags = days.map { day in ring == "all" ? ["move", "exercise", "stand"].allSatisfy { closed(day, $0) } : closed(day, ring) }
            var longest = 0, run = 0
            for flag in flags { run = flag ? run + 1 : 0; longest = max(longest, run) }
            #expect(streaks[ring]?["longest"] as? Int == longest && streaks[ring]?["current"] as? Int == run, "\(ring): \(flags)")
        }

        #expect(try cli.run(s.args(["goals", "set", "exercise", "45", "--from", "2024-04-01"])).status == 0)
        let goals = try #require(try json(cli.run(s.args(["goals", "--json"]))) as? [[String: Any]])
        #expect(goals.count == 1 && goals[0]["ring"] as? String == "exercise" && goals[0]["from"] as? String == "2024-04-01")

        let sources = try #require(try json(cli.run(s.args(["sources", "--json"]))) as? [[String: Any]])
        #expect(sources.map { $0["device"] as? String } == ["watch", "phone"])

        let refused = try cli.run(s.args(["sql", "DROP TABLE rings"]))
        #expect(refused.status != 0 && refused.stderr.split(separator: "\n").count == 1)
        let badDay = try cli.run(s.args(["rings", "--from", "2024-02-30"]))
        #expect(badDay.status != 0 && badDay.stderr.contains("2024-02-30"))
        let unknown = try cli.run(s.args(["summary", "stepz"]))
        #expect(unknown.status != 0 && unknown.stderr.contains("stepz"))
    }

    /// `vaultctl import` SIGKILLed at random moments: before, during or after its appends, or
    /// while it updates the sealed read models. Whatever the moment, the next command catches
    /// the read models up to exactly what `rebuild` gives.
    @Test func aKilledImportLeavesReadModelsThatCatchUpToTheRebuild() throws {
        let s = try Setup(days: 8)
        try makeVault(at: s.vault, passphraseFile: s.pass)
        let seed = TestSeed()
        var rng = seed.generator
        // Each kill falls within the import's run (`KillMoments`; 20-500 ms before it has run to
        // its end), so that most rounds kill it at work; at least one must.
        var moments = KillMoments(floor: 20_000, firstSpan: 500_000)
        for round in 0..<6 {
            let (finished, _, seconds) = try cli.runKilledCapturing(s.args(["import", s.zip]), after: moments.draw(for: "import", using: &rng))
            moments.record("import", finished: finished, seconds: seconds)

            #expect(try cli.run(s.args(["verify"])).status == 0, "round \(round), \(seed)")
            let caughtUp = try cli.run(s.args(["rings", "--json"]))
            let caughtUpSteps = try cli.run(s.args(["summary", "steps", "--json"]))
            #expect(caughtUp.status == 0 && caughtUpSteps.status == 0, "round \(round), \(seed): \(caughtUp.stderr)")
            #expect(try cli.run(s.args(["rebuild"])).status == 0)
            #expect(try cli.run(s.args(["rings", "--json"])).stdout == caughtUp.stdout, "round \(round), \(seed)")
            #expect(try cli.run(s.args(["summary", "steps", "--json"])).stdout == caughtUpSteps.stdout, "round \(round), \(seed)")
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: s.vault).filter { $0.contains(".tmp.") }
            #expect(leftovers.isEmpty, "round \(round), \(seed): \(leftovers)")
        }
        #expect(moments.kills["import", default: 0] > 0, "\(seed): no import was killed")
        // Finishing the import gives the same read models as one clean run.
        #expect(try cli.run(s.args(["import", s.zip])).status == 0)
        let clean = try Setup(days: 8)
        try makeVault(at: clean.vault, passphraseFile: clean.pass)
        #expect(try cli.run(clean.args(["import", s.zip])).status == 0)
        for command in [["rings", "--json"], ["summary", "steps", "--by", "week", "--json"], ["streaks", "--json"]] {
            #expect(try cli.run(s.args(command)).stdout == cli.run(clean.args(command)).stdout, "\(command)")
        }
    }
}
