import Foundation
import SyntheticHealth
import Testing

/// `vaultctl erase` as the spec has it, and what the other commands say afterwards.
@Suite(.timeLimit(.minutes(10))) struct EraseCommandTests {
    let cli = CLIRunner()

    @Test func eraseAsTheSpecSaysAndWhatFollows() throws {
        let dir = TemporaryDirectory("erase-cli")
        let vault = dir.path + "/vault", pass = dir.passphraseFile("pass", "erase test passphrase")
        func run(_ args: [String]) throws -> CLIRunner.Result { try cli.run(args + ["--vault", vault, "--passphrase-file", pass]) }
        func json(_ result: CLIRunner.Result) throws -> Any { try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) }
        let zip = dir.path + "/export.zip"
        try SyntheticExport.writeZip(to: zip, options: .init(days: 10, firstDay: (2024, 2, 25), tripStart: 100))
        try makeVault(at: vault, passphraseFile: pass)
        #expect(try run(["import", zip]).status == 0)
        let heartBefore = try json(try run(["summary", "heart-rate", "--json"])) as! [[String: Any]]
        #expect(heartBefore.map { $0["period"] as! String } == (25...29).map { "2024-02-\($0)" } + (1...5).map { "2024-03-0\($0)" })

        let unconfirmed = try run(["erase", "--categories", "heart", "--from", "2024-02", "--to", "2024-02"])
        #expect(unconfirmed.status != 0 && unconfirmed.stderr.contains("erasure cannot be undone; add --yes to confirm"))
        let badMonth = try run(["erase", "--categories", "heart", "--from", "2024-2", "--yes"])
        #expect(badMonth.status != 0 && badMonth.stderr.contains("--from takes a month as YYYY-MM, not '2024-2'"))
        let badCategory = try run(["erase", "--categories", "hearts", "--yes"])
        #expect(badCategory.status != 0 && badCategory.stderr.contains("unknown category 'hearts'"))

        let erased = try run(["erase", "--categories", "heart", "--from", "2024-02", "--to", "2024-02", "--yes", "--json"])
        #expect(erased.status == 0, "\(erased.stderr)")
        let summary = try json(erased) as! [String: Any]
        #expect(summary["categories"] as? [String] == ["heart"] && summary["months"] as? [String] == ["2024-02"])
        let count = summary["samplesErased"] as! Int
        // February's heart records (rate, its variability, resting and walking averages), counted
        // in the export's text.
        let xml = try ExportRecordCount.xml(inZip: zip)
        let heartTypes = ["HeartRate", "RestingHeartRate", "WalkingHeartRateAverage"].map { "HKQuantityTypeIdentifier" + $0 }
        #expect(count == heartTypes.reduce(0) { $0 + ExportRecordCount.records(in: xml, typePrefix: $1, startPrefix: "2024-02") })

        let heartAfter = try json(try run(["summary", "heart-rate", "--json"])) as! [[String: Any]]
        #expect(heartAfter.map { $0["period"] as! String } == (1...5).map { "2024-03-0\($0)" })
        let verify = try json(try run(["verify", "--json"])) as! [String: Any]
        // verify counts what the erased frames' headers hold: the samples and the definitions of
        // names they brought in with them.
        #expect(verify["ok"] as? Bool == true && (verify["erasedEvents"] as? Int ?? 0) > count && (verify["erasedFrames"] as? Int ?? 0) >= 1)
        let erasures = verify["erasures"] as! [[String: Any]]
        #expect(erasures.count == 1 && erasures[0]["categories"] as? [String] == ["heart"] && erasures[0]["months"] as? [String] == ["2024-02"])
        let text = try run(["verify"])
        #expect(text.status == 0 && text.stdout.contains("erased, ") && text.stdout.contains("events: not damage") && text.stdout.contains("heart for 2024-02, \(count) events"))
        let history = try json(try run(["history", "--json"])) as! [[String: Any]]
        let entry = history.first { $0["kind"] as? String == "erase" }?["detail"] as? [String: String]
        #expect(entry == ["categories": "heart", "months": "2024-02", "events": "\(count)"])

        // The same export again: those samples are refused and said so; with --allow-erased they return.
        let again = try run(["import", zip, "--json"])
        let report = try json(again) as! [String: Any]
        #expect(report["added"] as? Int == 0 && report["erased"] as? Int == count)
        let line = try run(["import", zip])
        #expect(line.stdout.contains("erased \(count) (of erased months; --allow-erased takes them)"))
        let back = try json(try run(["import", zip, "--allow-erased", "--json"])) as! [String: Any]
        #expect(back["added"] as? Int == count && back["erased"] as? Int == 0)
        #expect((try json(try run(["summary", "heart-rate", "--json"])) as! [[String: Any]]).count == heartBefore.count)

        let nothing = try run(["erase", "--categories", "reproductive", "--yes"])
        #expect(nothing.status == 0 && nothing.stdout.contains("nothing to erase"))
    }
}
