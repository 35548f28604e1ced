import Foundation
import Testing

/// What a person new to vaultctl meets first (issue 36, the newcomer notes): each answer says the
/// real cause and what to do.
@Suite(.timeLimit(.minutes(10))) struct NewcomerTests {
    let cli = CLIRunner()

    @Test func theFirstCommandsSayWhatIsWrong() throws {
        let v = try CLIVault(initialized: false)
        // No vault here: said before any passphrase is asked for.
        let none = try cli.run(["verify", "--vault", v.path])
        #expect(none.status != 0 && none.stderr.contains("no vault at \(v.path) (run `vaultctl init` first, or pass --vault DIR)"), "\(none.stderr)")
        #expect(try v.run(["init", "--kdf", "interactive"]).status == 0)
        // An empty passphrase variable is not a wrong passphrase.
        let empty = try CLIRunner(environment: ["HEALTHVAULT_PASSPHRASE": ""]).run(["verify", "--vault", v.path])
        #expect(empty.status != 0 && empty.stderr.contains("HEALTHVAULT_PASSPHRASE is set but empty"), "\(empty.stderr)")
        let version = try cli.run(["--version"])
        #expect(version.status == 0 && version.stdout.hasPrefix("vaultctl 0.3.0"), "\(version.stdout)")
        let help = try cli.run(["import", "--help"])
        #expect(help.stdout.contains("companion JSON") && help.stdout.contains("type,start,end,value") && help.stdout.contains("Date,Step Count"))
    }

    @Test func summaryTakesTheNamesImportTakesAndSaysWhatAWorkoutIs() throws {
        let v = try CLIVault()
        let run = v.run
        // Daily totals, as apps and spreadsheets write them.
        let csv = try v.write("daily.csv", "Date,Step Count (count),Active Energy (kJ)\n2024-03-05,8000,418.4\n2024-03-06,9500,\n")
        let imported = try run(["import", csv, "--json"])
        #expect(imported.status == 0, "\(imported.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(imported.stdout.utf8)) as? [String: Any])
        #expect(report["added"] as? Int == 3 && report["rejected"] as? Int == 0)
        for name in ["steps", "StepCount", "step_count", "HKQuantityTypeIdentifierStepCount"] {
            let summary = try run(["summary", name, "--json"])
            let rows = try #require(try JSONSerialization.jsonObject(with: Data(summary.stdout.utf8)) as? [[String: Any]], "\(name): \(summary.stderr)")
            #expect(rows.map { "\($0["period"]!)=\($0["value"]!)" } == ["2024-03-05=8000", "2024-03-06=9500"], "\(name)")
        }
        let energy = try #require(try JSONSerialization.jsonObject(with: Data(try run(["summary", "active_energy", "--json"]).stdout.utf8)) as? [[String: Any]])
        #expect(energy.map { "\($0["period"]!)=\($0["value"]!)" } == ["2024-03-05=100"])
        let workout = try v.write("run.json", #"{"data":{"workouts":[{"name":"Running","start":"2024-03-05 07:00:00 +0000","end":"2024-03-05 07:30:00 +0000","duration":1800}]}}"#)
        #expect(try run(["import", workout]).status == 0)
        let running = try run(["summary", "running"])
        #expect(running.status != 0 && running.stderr.contains("'running' is a workout activity: `vaultctl workouts` shows workouts by type"), "\(running.stderr)")
    }

    @Test func anECGWithAnUnreadableDateIsNamedAsAnECG() throws {
        let v = try CLIVault()
        let run = v.run
        let ecg = try v.write("ecg_2024-05-01.csv", "Name,Jane\nDate of Birth,\"Jan 1, 1980\"\nRecorded Date,yesterday at noon\nClassification,Sinus Rhythm\nSample Rate,512 hertz\nLead,Lead I\nUnit,µV\n\n-93.456\n-94.1\n")
        let result = try run(["import", ecg])
        #expect(result.status != 0 && result.stderr.contains("ECG recording") && !result.stderr.contains("CSV header must name"), "\(result.stderr)")
        #expect(!result.stderr.contains("Jane"))
    }
}

/// Ring goals never set (issue 36: an iPhone alone writes Apple summaries with goal 0): the
/// assumed 400/30/12 are said, by `rings` and in the report, and not once a goal is set.
@Suite(.timeLimit(.minutes(10))) struct AssumedGoalTests {
    @Test func assumedGoalsAreSaid() throws {
        let v = try CLIVault()
        let run = v.run
        let csv = try v.write("energy.csv", "type,start,end,value,unit,source\nactive-energy,2024-03-05T08:00:00Z,2024-03-05T09:00:00Z,250,kcal,Phone\n")
        #expect(try run(["import", csv]).status == 0)
        let rings = try run(["rings"])
        #expect(rings.status == 0 && rings.stderr.contains("no ring goal was ever set (nor in Apple's summaries): 400 kcal, 30 min and 12 h are assumed"),
                "\(rings.stderr)")
        let html = v.file("r.html")
        #expect(try run(["report", "--out", html]).status == 0)
        #expect(try String(contentsOfFile: html, encoding: .utf8).contains("No ring goal was ever set"))
        #expect(try run(["goals", "set", "move", "500", "--from", "2024-03-01"]).status == 0)
        let after = try run(["rings"])
        #expect(after.status == 0 && !after.stderr.contains("no ring goal was ever set") && after.stdout.contains("250/500"), "\(after.stdout)")
    }

    /// What a person sees of a real export with an app's rewritten copies (issue 36, items 6 and 7):
    /// `import` says how many there are, `--json` counts them as `rewrites`, and `sql` finds the
    /// foods the metadata names. Counts from RewrittenCopiesFixtureTests' independent scan.
    @Test func importSaysHowManyRewritesAndSQLFindsTheMetadata() throws {
        let v = try CLIVault()
        let zip = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/apple-health/comocomo/export.zip").path
        let imported = try v.run(["import", zip, "--json"])
        #expect(imported.status == 0, "\(imported.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(imported.stdout.utf8)) as? [String: Any])
        #expect(report["rewrites"] as? Int == 151 && report["added"] as? Int == 11_035)
        let again = try v.run(["import", zip])
        #expect(again.stdout.contains("added 0, duplicates 11035") && !again.stdout.contains("rewrites:"), "\(again.stdout)")
        let foods = try v.run(["sql", "--json", "SELECT value, sum(records) AS n FROM metadata_by_day WHERE key = 'HKFoodType' AND type = 'HKCorrelationTypeIdentifierFood' GROUP BY value ORDER BY n DESC, value LIMIT 1"])
        let top = try #require(try JSONSerialization.jsonObject(with: Data(foods.stdout.utf8)) as? [[String: Any]], "\(foods.stderr)")
        // Counted with Python's ElementTree over the file: Bananas and Cucumber, three meals each.
        #expect(top.count == 1 && top.first?["value"] as? String == "Bananas" && top.first?["n"] as? Int == 3, "\(top)")
    }
}
