import Foundation
import Testing

/// The training commands' shapes as the contract fixes them (round 3, "Training stats"), run as a
/// person runs them, with TZ set.
@Suite(.timeLimit(.minutes(10))) struct TrainingCommandTests {
    func json(_ result: CLIRunner.Result) throws -> Any {
        #expect(result.status == 0, "\(result.stderr)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
    }

    @Test func exercisesSetsAndStatsHaveTheContractsShapes() throws {
        var cli = CLIRunner()
        cli.environment["TZ"] = "America/Los_Angeles"
        let vault = try CLIVault(cli: cli)
        let run = vault.run
        let added = try run(["exercise", "add", "Wall sit", "--body-part", "legs,core", "--motion", "strength"])
        #expect(added.status == 0 && added.stdout == "exercise 'Wall sit' defined: legs, core; strength\n", "\(added.stdout)\(added.stderr)")
        let list = try #require(try json(run(["exercise", "list", "--json"])) as? [[String: Any]])
        let wallSit = try #require(list.first { $0["name"] as? String == "Wall sit" })
        #expect(wallSit["bodyParts"] as? [String] == ["legs", "core"] && wallSit["motion"] as? String == "strength")
        let pushUps = try #require(list.first { $0["name"] as? String == "push-ups" })
        #expect(pushUps["bodyParts"] as? [String] == ["chest", "arms"] && pushUps["motion"] as? String == "strength")
        #expect(Set(list.map { Set($0.keys) }) == [["name", "bodyParts", "motion"]])

        // 23:50 on Sunday 2024-03-10 in Los Angeles (07:50 on Monday in UTC): Sunday's week.
        let logged = try run(["practice", "push-ups", "--reps", "20", "--duration", "2", "--at", "2024-03-10 23:50"])
        #expect(logged.stdout == "push-ups: 20 reps in 2 min on 2024-03-10\n", "\(logged.stdout)\(logged.stderr)")
        #expect(try run(["practice", "Wall sit", "--reps", "1", "--duration", "1.5", "--at", "2024-03-11 00:10"]).status == 0)
        #expect(try run(["practice", "running", "--reps", "0", "--duration", "30", "--at", "2024-03-12 07:00"]).status == 0)

        let weeks = try #require(try json(run(["stats", "--json"])) as? [[String: Any]])
        #expect(weeks.map { $0["period"] as? String } == ["2024-W10", "2024-W11"])
        #expect(Set(weeks.map { Set($0.keys) }) == [["period", "sets", "reps", "minutes", "workouts", "bodyParts", "motion"]])
        #expect(weeks[0]["sets"] as? Int == 1 && weeks[0]["reps"] as? Int == 20 && weeks[0]["minutes"] as? Double == 2)
        #expect(weeks[0]["bodyParts"] as? [String: Double] == ["chest": 0.5, "arms": 0.5])
        #expect(weeks[1]["sets"] as? Int == 2 && weeks[1]["reps"] as? Int == 1 && weeks[1]["workouts"] as? Int == 0)
        #expect(weeks[1]["minutes"] as? Double == 31.5)
        // By count: wall sit (legs and core, half each) and running (legs).
        #expect(weeks[1]["bodyParts"] as? [String: Double] == ["legs": 0.75, "core": 0.25])
        #expect(weeks[1]["motion"] as? [String: Double] == ["strength": 0.5, "endurance": 0.5])
        // By minutes: 1.5 of 31.5 strength.
        let byMinutes = try #require(try json(run(["stats", "--minutes", "--from", "2024-03-11", "--json"])) as? [[String: Any]])
        #expect(byMinutes.count == 1)
        let motion = try #require(byMinutes.first?["motion"] as? [String: Double])
        #expect(abs(motion["strength"]! - 1.5 / 31.5) < 1e-6 && abs(motion["endurance"]! - 30 / 31.5) < 1e-6, "\(motion)")
        let fortnight = try #require(try json(run(["stats", "--by", "2weeks", "--json"])) as? [[String: Any]])
        #expect(fortnight.map { $0["period"] as? String } == ["2024-02-28..2024-03-12"])
        let month = try #require(try json(run(["stats", "--by", "month", "--json"])) as? [[String: Any]])
        #expect(month.map { $0["period"] as? String } == ["2024-03"] && month.first?["sets"] as? Int == 3)

        let text = try run(["stats", "--from", "2024-03-11"])
        #expect(text.stdout == """
            2024-W11  2 sets, 1 reps, 31.5 min, 0 workouts
              body parts: legs 75%, core 25%
              motion:     endurance 50%, strength 50%

            """, "\(text.stdout)")

        for (arguments, message) in [
            (["practice", "handstand", "--reps", "3"], "no exercise is named 'handstand'"),
            (["practice", "plank", "--reps", "0"], "a set needs repetitions or a duration"),
            (["practice", "plank", "--reps", "1", "--at", "yesterday"], "--at takes a local time"),
            (["exercise", "add", "Neck roll", "--body-part", "neck", "--motion", "mobility"], "'neck' is none of chest, back"),
            (["exercise", "add", "Neck roll", "--body-part", "shoulders", "--motion", "balance"], "--motion takes strength, endurance or mobility"),
            (["stats", "--by", "day"], "--by takes week, 2weeks or month"),
        ] {
            let refused = try run(arguments)
            #expect(refused.status != 0 && refused.stderr.contains(message), "\(arguments): \(refused.stderr)")
        }
        let history = try #require(try json(run(["history", "--json"])) as? [[String: Any]])
        let defined = try #require(history.first { $0["kind"] as? String == "exercise" })
        #expect(defined["detail"] as? [String: String] == ["exercise": "Wall sit", "bodyParts": "legs,core", "motion": "strength"])
    }
}
