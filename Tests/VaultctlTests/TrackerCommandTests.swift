import Foundation
import Testing

/// The tracker commands' shapes as the spec fixes them, run as a user runs them (TZ set, as a
/// person's machine has it).
@Suite(.timeLimit(.minutes(10))) struct TrackerCommandTests {
    @Test func aTrackerIsDefinedLoggedListedAndStreaked() throws {
        let dir = TemporaryDirectory()
        var cli = CLIRunner()
        cli.environment["TZ"] = "Europe/Berlin"
        let pass = dir.passphraseFile("pass", "tracker passphrase")
        func run(_ arguments: [String]) throws -> CLIRunner.Result {
            try cli.run(arguments + ["--vault", dir.file("vault"), "--passphrase-file", pass])
        }
        try makeVault(at: dir.file("vault"), passphraseFile: pass)
        let added = try run(["tracker", "add", "NoAlc", "--levels", "steady=0,easy=4,wild=6", "--success", "steady", "--day-starts", "04:00"])
        #expect(added.status == 0)
        for (at, level) in [("2025-03-28 21:00", "steady"), ("2025-03-30 01:30", "steady"), ("2025-03-30 21:00", "wild")] {
            #expect(try run(["track", "NoAlc", level, "--at", at]).status == 0)
        }
        let days = try run(["tracker", "days", "NoAlc", "--json"])
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(days.stdout.utf8)) as? [[String: Any]])
        #expect(rows.map { $0["date"] as? String } == ["2025-03-28", "2025-03-29", "2025-03-30"])
        #expect(rows.map { $0["level"] as? String } == ["steady", "steady", "wild"])
        #expect(rows.map { $0["value"] as? Double } == [0, 0, 6])
        let streak = try run(["streaks", "--tracker", "NoAlc", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(streak.stdout.utf8)) as? [String: Any])
        #expect(object["current"] as? Int == 0)
        #expect(object["longest"] as? Int == 2)
        #expect(object["longestFrom"] as? String == "2025-03-28")
        #expect(object["longestTo"] as? String == "2025-03-29")
        let list = try run(["tracker", "list", "--json"])
        let trackers = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
        #expect(trackers.first?["name"] as? String == "NoAlc")
        #expect(trackers.first?["dayStarts"] as? String == "04:00")
        #expect(trackers.first?["category"] as? String == "trackers")
        let bad = try run(["track", "NoAlc", "tipsy"])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("'tipsy' is not a level of NoAlc"))
        let history = try run(["history", "--json"])
        let events = try #require(try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [[String: Any]])
        let defined = try #require(events.first { $0["kind"] as? String == "tracker" })
        #expect(defined["detail"] as? [String: String] == ["tracker": "NoAlc", "levels": "steady=0,easy=4,wild=6", "success": "steady",
                                                           "dayStarts": "04:00", "category": "trackers"])
    }
}
