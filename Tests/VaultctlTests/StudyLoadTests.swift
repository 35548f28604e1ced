import Foundation
import Projections
import ResearchBundle
@testable import StudyStore
import SyntheticHealth
import Testing

/// `vaultctl study load` as a researcher runs it, into the embedded SQLite file and into a real
/// PostgreSQL server the test starts: a load, a reload that adds nothing, a withdrawal, a bundle
/// from someone not on the roster, a tampered bundle, and a load killed half-way.
@Suite(.timeLimit(.minutes(10))) struct StudyLoadTests {
    /// A participant's vault, paired with the lab.
    struct Participant {
        var vault: String
        var pass: String
        var fingerprint: String
        func args(_ arguments: [String]) -> [String] { arguments + ["--vault", vault, "--passphrase-file", pass] }
    }

    /// The study database, whichever kind: a count from one SQL query.
    struct Study {
        var url: String
        var sqlitePath: String?
        var server: PostgresServer?

        func count(_ sql: String) throws -> Int {
            if let sqlitePath {
                let db = try SQLiteConnection(creatingPlainFile: sqlitePath)
                return Int(try db.scalarText(sql) ?? "") ?? -1
            }
            return Int(try server!.psql(sql)) ?? -1
        }
    }

    let cli = CLIRunner()

    func participant(_ dir: TemporaryDirectory, _ name: String, firstDay: (Int, Int, Int)) throws -> Participant {
        let pass = dir.passphraseFile(name + ".pass", "study passphrase of \(name)")
        var p = Participant(vault: dir.file(name), pass: pass, fingerprint: "")
        try makeVault(at: p.vault, passphraseFile: p.pass)
        let zip = dir.file(name + ".zip")
        try SyntheticExport.writeZip(to: zip, options: .init(days: 4, firstDay: firstDay, tripStart: 100))
        #expect(try cli.run(p.args(["import", zip])).status == 0)
        #expect(try cli.run(p.args(["recipient", "add", "lab", "--key", dir.file("lab.pub")])).status == 0)
        let identity = try JSONSerialization.jsonObject(with: Data(try cli.run(p.args(["identity", "--json"])).stdout.utf8)) as! [String: String]
        p.fingerprint = identity["fingerprint"]!
        return p
    }

    func export(_ p: Participant, _ path: String) throws {
        let result = try cli.run(p.args(["export", "lab", "--out", path]))
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// Lines of a bundle's NDJSON files by granularity ("raw") and by granularity and category
    /// ("raw:heart"), counted from `bundle open`'s output.
    func lines(of bundle: String, in dir: TemporaryDirectory) throws -> [String: Int] {
        let out = dir.file("opened-\(UUID().uuidString.prefix(8))")
        #expect(try cli.run(["bundle", "open", bundle, "--key", dir.file("lab.key"), "--out", out, "--any-sender"]).status == 0)
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/manifest.json"))) as! [String: Any]
        var counts: [String: Int] = [:]
        for file in manifest["files"] as! [[String: Any]] where file["format"] as? String == "ndjson" {
            let text = try String(contentsOfFile: out + "/" + (file["path"] as! String), encoding: .utf8)
            let lines = text.split(separator: "\n").count
            counts[file["granularity"] as! String, default: 0] += lines
            if let category = file["category"] as? String { counts["\(file["granularity"] as! String):\(category)", default: 0] += lines }
        }
        return counts
    }

    func load(_ study: Study, _ bundles: [String], dir: TemporaryDirectory, roster: String) throws -> (status: Int32, json: [String: Any], stderr: String) {
        let result = try cli.run(["study", "load"] + bundles + ["--key", dir.file("lab.key"), "--into", study.url, "--roster", roster, "--json"])
        let json = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]) ?? [:]
        return (result.status, json, result.stderr)
    }

    @Test(arguments: ["sqlite", "postgres"])
    func aStudyLoadsOnceHonoursWithdrawalsAndRefusesWhatItShould(backend: String) throws {
        let dir = TemporaryDirectory("study-\(backend)")
        let server = backend == "postgres" ? try PostgresServer() : nil
        let study = Study(url: server?.url ?? "sqlite:" + dir.file("study.sqlite"), sqlitePath: server == nil ? dir.file("study.sqlite") : nil, server: server)
        #expect(try cli.run(["keygen", "--out", dir.file("lab")]).status == 0)

        let a = try participant(dir, "a", firstDay: (2024, 3, 1))
        let b = try participant(dir, "b", firstDay: (2024, 4, 28))
        let stranger = try participant(dir, "stranger", firstDay: (2024, 3, 1))
        #expect(try cli.run(a.args(["grant", "lab", "--categories", "activity,heart", "--granularity", "raw"])).status == 0)
        #expect(try cli.run(b.args(["grant", "lab", "--categories", "activity", "--granularity", "daily"])).status == 0)
        #expect(try cli.run(stranger.args(["grant", "lab", "--categories", "activity"])).status == 0)
        let roster = dir.file("roster.csv")
        try Data("participant,fingerprint\nP-001,\(a.fingerprint)\nP-002,\(b.fingerprint)\n".utf8).write(to: URL(fileURLWithPath: roster))
        for (p, name) in [(a, "a1"), (b, "b1"), (stranger, "s1")] { try export(p, dir.file(name + ".bundle")) }
        let a1 = try lines(of: dir.file("a1.bundle"), in: dir), b1 = try lines(of: dir.file("b1.bundle"), in: dir)
        let fa = "'\(a.fingerprint)'", fb = "'\(b.fingerprint)'"

        // Load: every line a row, months partitioned in PostgreSQL.
        let first = try load(study, [dir.file("a1.bundle"), dir.file("b1.bundle")], dir: dir, roster: roster)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.json["bundles"] as? Int == 2 && first.json["participants"] as? Int == 2)
        #expect(first.json["rows"] as? Int == a1["raw"]! + b1["daily"]! && first.json["duplicates"] as? Int == 0 && first.json["withdrawn"] as? Int == 0)
        #expect(try study.count("SELECT count(*) FROM samples WHERE fingerprint = \(fa)") == a1["raw"]!)
        #expect(try study.count("SELECT count(*) FROM aggregates WHERE fingerprint = \(fb) AND granularity = 'daily'") == b1["daily"]!)
        #expect(try study.count("SELECT count(*) FROM participants WHERE label IN ('P-001', 'P-002')") == 2)
        if let server {
            #expect(try server.psql("SELECT count(*) FROM pg_inherits WHERE inhparent = 'samples'::regclass AND inhrelid::regclass::text LIKE 'samples_2024_03'") == "1")
            #expect(try server.psql("SELECT count(*) FROM samples_default") == "0")
        }

        // Loading a bundle again adds nothing.
        let again = try load(study, [dir.file("a1.bundle")], dir: dir, roster: roster)
        #expect(again.status == 0 && again.json["rows"] as? Int == 0 && again.json["duplicates"] as? Int == a1["raw"]!)
        #expect(try study.count("SELECT count(*) FROM samples") == a1["raw"]!)

        // Someone not on the roster, and a bundle damaged in transit: refused, nothing kept.
        let strange = try load(study, [dir.file("s1.bundle")], dir: dir, roster: roster)
        #expect(strange.status != 0 && strange.stderr.contains("not on the roster"))
        var damaged = try Data(contentsOf: URL(fileURLWithPath: dir.file("a1.bundle")))
        damaged[damaged.count / 2] ^= 0x40
        try damaged.write(to: URL(fileURLWithPath: dir.file("damaged.bundle")))
        let refused = try load(study, [dir.file("damaged.bundle")], dir: dir, roster: roster)
        #expect(refused.status != 0 && refused.stderr.contains("damaged.bundle"))
        #expect(try study.count("SELECT count(*) FROM bundles") == 2)
        #expect(try study.count("SELECT count(*) FROM samples") == a1["raw"]!)

        // A withdraws heart: their next bundle's consents no longer cover those rows.
        let heartRows = try study.count("SELECT count(*) FROM samples WHERE fingerprint = \(fa) AND category = 'heart'")
        #expect(heartRows == a1["raw:heart"], "\(a1)")
        #expect(try cli.run(a.args(["revoke", "lab", "--categories", "heart"])).status == 0)
        try export(a, dir.file("a2.bundle"))
        let withdrawn = try load(study, [dir.file("a2.bundle")], dir: dir, roster: roster)
        #expect(withdrawn.status == 0, "\(withdrawn.stderr)")
        #expect(withdrawn.json["withdrawn"] as? Int == heartRows && withdrawn.json["rows"] as? Int == 0)
        #expect(try study.count("SELECT count(*) FROM samples WHERE fingerprint = \(fa) AND category = 'heart'") == 0)
        #expect(try study.count("SELECT sum(rows) FROM withdrawals WHERE fingerprint = \(fa) AND category = 'heart' AND granularity = 'raw'") == heartRows)

        // A load killed half-way keeps nothing; the next one loads the bundle whole.
        #expect(try cli.run(b.args(["grant", "lab", "--categories", "heart", "--granularity", "raw"])).status == 0)
        try export(b, dir.file("b2.bundle"))
        let b2 = try lines(of: dir.file("b2.bundle"), in: dir)
        // The first pause comes once rows past line 1,100 were sent: they are in the open transaction.
        #expect(b2["raw"]! + b2["daily"]! > 1_100)
        // Killed with rows staged, then with every row moved and only the commit left: nothing kept.
        for pause in [["HEALTHVAULT_STUDY_PAUSE_AFTER_LINES": "1100"], ["HEALTHVAULT_STUDY_PAUSE_BEFORE_COMMIT": "1"]] {
            let marker = Pipe()
            let paused = try CLIRunner(environment: pause).start(
                ["study", "load", dir.file("b2.bundle"), "--key", dir.file("lab.key"), "--into", study.url, "--roster", roster], stderr: marker)
            var said = Data()
            let deadline = Date().addingTimeInterval(300)
            while !String(decoding: said, as: UTF8.self).contains("paused"), paused.isRunning, Date() < deadline {
                said += Deadline.read(marker.fileHandleForReading, seconds: 1) ?? Data()
            }
            #expect(String(decoding: said, as: UTF8.self).contains("study load paused"), "\(pause)")
            if let server {
                #expect(try server.psql("SELECT count(*) FROM pg_stat_activity WHERE backend_xid IS NOT NULL AND datname = 'postgres'") == "1")
                if pause.keys.contains("HEALTHVAULT_STUDY_PAUSE_AFTER_LINES") {
                    #expect(try server.psql("SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'COPY %' AND datname = 'postgres'") == "1")
                }
            } else if pause.keys.contains("HEALTHVAULT_STUDY_PAUSE_BEFORE_COMMIT") {
                #expect(FileManager.default.fileExists(atPath: study.sqlitePath! + "-journal"))
            }
            kill(paused.processIdentifier, SIGKILL)
            paused.waitUntilExit()
            #expect(try study.count("SELECT count(*) FROM samples WHERE fingerprint = \(fb)") == 0, "\(pause)")
            #expect(try study.count("SELECT count(*) FROM bundles") == 3, "\(pause)")
        }
        let whole = try load(study, [dir.file("b2.bundle")], dir: dir, roster: roster)
        #expect(whole.status == 0, "\(whole.stderr)")
        #expect(whole.json["rows"] as? Int == b2["raw"]! && whole.json["duplicates"] as? Int == b2["daily"]!)
        #expect(try study.count("SELECT count(*) FROM samples WHERE fingerprint = \(fb)") == b2["raw"]!)
    }
}

extension StudyLoadTests {
    /// `export --since-last` holds only what the last bundle to the recipient did not: nothing
    /// right after it, then the new samples and the days they change; loaded after the first,
    /// the study holds what one full export would.
    @Test func sinceLastBundlesAddUpToAFullOne() throws {
        let dir = TemporaryDirectory("study-since-last")
        #expect(try cli.run(["keygen", "--out", dir.file("lab")]).status == 0)
        let a = try participant(dir, "a", firstDay: (2024, 3, 1))
        #expect(try cli.run(a.args(["grant", "lab", "--categories", "activity", "--granularity", "raw"])).status == 0)
        #expect(try cli.run(a.args(["grant", "lab", "--categories", "heart", "--granularity", "daily"])).status == 0)
        try export(a, dir.file("full1.bundle"))
        let hash1 = try #require((try JSONSerialization.jsonObject(with: Data(try cli.run(a.args(["history", "--json"])).stdout.utf8)) as? [[String: Any]])?
            .last { $0["kind"] as? String == "export" }?["detail"] as? [String: String])["bundleHash"]

        // Nothing new: empty files, the manifest naming the bundle it follows.
        let empty = try cli.run(a.args(["export", "lab", "--out", dir.file("empty.bundle"), "--since-last", "--json"]))
        #expect(empty.status == 0, "\(empty.stderr)")
        let emptyJSON = try #require(try JSONSerialization.jsonObject(with: Data(empty.stdout.utf8)) as? [String: Any])
        #expect(emptyJSON["follows"] as? String == hash1)
        #expect(emptyJSON["counts"] as? [String: Int] == ["activity": 0, "heart": 0])

        // New samples: two steps on a day already shared, one heart rate on a new day.
        let csv = dir.file("more.csv")
        try Data("""
            type,start,end,value,unit,source
            HKQuantityTypeIdentifierStepCount,2024-03-02T23:10:00+01:00,2024-03-02T23:20:00+01:00,123,count,Phone
            HKQuantityTypeIdentifierStepCount,2024-03-02T23:30:00+01:00,2024-03-02T23:40:00+01:00,77,count,Phone
            HKQuantityTypeIdentifierHeartRate,2024-03-09T08:00:00+01:00,2024-03-09T08:00:00+01:00,61,count/min,Phone

            """.utf8).write(to: URL(fileURLWithPath: csv))
        #expect(try cli.run(a.args(["import", csv])).status == 0)
        let next = try cli.run(a.args(["export", "lab", "--out", dir.file("next.bundle"), "--since-last", "--json"]))
        #expect(next.status == 0, "\(next.stderr)")
        let nextJSON = try #require(try JSONSerialization.jsonObject(with: Data(next.stdout.utf8)) as? [String: Any])
        #expect(nextJSON["follows"] as? String != hash1)  // it follows the empty one, the last bundle to the lab
        #expect(nextJSON["counts"] as? [String: Int] == ["activity": 2, "heart": 1])

        // The full bundle, then the two since-last ones: the rows of one full export now.
        try export(a, dir.file("full2.bundle"))
        let full2 = try lines(of: dir.file("full2.bundle"), in: dir)
        let study = Study(url: "sqlite:" + dir.file("study.sqlite"), sqlitePath: dir.file("study.sqlite"), server: nil)
        let roster = dir.file("roster.csv")
        try Data("P-1,\(a.fingerprint)\n".utf8).write(to: URL(fileURLWithPath: roster))
        let loaded = try load(study, [dir.file("full1.bundle"), dir.file("empty.bundle"), dir.file("next.bundle")], dir: dir, roster: roster)
        #expect(loaded.status == 0, "\(loaded.stderr)")
        #expect(try study.count("SELECT count(*) FROM samples") == full2["raw"]!)
        #expect(try study.count("SELECT count(*) FROM aggregates") == full2["daily"]!)
        #expect(try study.count("SELECT count(*) FROM bundles WHERE follows IS NOT NULL") == 2)
        let reloaded = try load(study, [dir.file("full2.bundle")], dir: dir, roster: roster)
        #expect(reloaded.json["rows"] as? Int == 0 && reloaded.json["duplicates"] as? Int == full2["raw"]! + full2["daily"]!)
    }
}

extension StudyLoadTests {
    /// `export --format fhir|omh`: the same lines as FHIR R4 Observations (LOINC where it has a
    /// code) and Open mHealth data points, line for line; `study load` names what it cannot read.
    @Test func fhirAndOpenMHealthBundlesCarryTheSameLines() throws {
        let dir = TemporaryDirectory("study-formats")
        #expect(try cli.run(["keygen", "--out", dir.file("lab")]).status == 0)
        let a = try participant(dir, "a", firstDay: (2024, 3, 1))
        #expect(try cli.run(a.args(["grant", "lab", "--categories", "activity,heart", "--granularity", "raw", "--to", "2024-03-02"])).status == 0)
        func objects(_ path: String) throws -> [[String: Any]] {
            try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map {
                try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            }
        }
        func open(_ format: String) throws -> String {
            let bundle = dir.file(format + ".bundle"), out = dir.file(format)
            let made = try cli.run(a.args(["export", "lab", "--out", bundle, "--format", format]))
            #expect(made.status == 0, "\(made.stderr)")
            #expect(try cli.run(["bundle", "open", bundle, "--key", dir.file("lab.key"), "--out", out, "--expect-sender", a.fingerprint]).status == 0)
            return out
        }
        let plain = try open("ndjson"), fhir = try open("fhir"), omh = try open("omh")
        let lines = try objects(plain + "/data/heart.ndjson") + (try objects(plain + "/data/activity.ndjson"))
        let observations = try objects(fhir + "/data/heart.fhir.ndjson") + (try objects(fhir + "/data/activity.fhir.ndjson"))
        let points = try objects(omh + "/data/heart.omh.ndjson") + (try objects(omh + "/data/activity.omh.ndjson"))
        #expect(!lines.isEmpty && observations.count == lines.count && points.count == lines.count)
        var checked: [String: Int] = [:]
        for (i, line) in lines.enumerated() {
            let observation = observations[i], point = points[i]
            let type = line["type"] as! String
            #expect(observation["resourceType"] as? String == "Observation" && observation["status"] as? String == "final")
            let codings = (observation["code"] as? [String: Any])?["coding"] as? [[String: Any]] ?? []
            #expect(codings.contains { $0["system"] as? String == "urn:healthvault:type" && $0["code"] as? String == type })
            let quantity = observation["valueQuantity"] as? [String: Any]
            let header = point["header"] as? [String: Any], body = point["body"] as? [String: Any]
            switch type {
            case "HKQuantityTypeIdentifierStepCount":
                #expect(codings.contains { $0["system"] as? String == "http://loinc.org" && $0["code"] as? String == "55423-8" })
                #expect(quantity?["value"] as? Double == line["value"] as? Double && quantity?["code"] as? String == "{steps}")
                #expect((header?["schema_id"] as? [String: String])?["name"] == "step-count" && body?["step_count"] as? Double == line["value"] as? Double)
                checked["steps", default: 0] += 1
            case "HKQuantityTypeIdentifierHeartRate":
                #expect(codings.contains { $0["system"] as? String == "http://loinc.org" && $0["code"] as? String == "8867-4" })
                #expect(quantity?["value"] as? Double == line["value"] as? Double && quantity?["code"] as? String == "/min")
                let rate = body?["heart_rate"] as? [String: Any]
                #expect(rate?["value"] as? Double == line["value"] as? Double && rate?["unit"] as? String == "beats/min")
                checked["heart rate", default: 0] += 1
            default:
                break
            }
            // Times as the line gives them.
            if let period = observation["effectivePeriod"] as? [String: String] {
                #expect(period["start"] == line["start"] as? String && period["end"] == line["end"] as? String)
            } else {
                #expect(observation["effectiveDateTime"] as? String == line["start"] as? String)
            }
        }
        #expect(checked["steps", default: 0] > 10 && checked["heart rate", default: 0] > 10, "\(checked)")
        // Ids are keyed by the bundle and the line's place: no two resources share one.
        #expect(Set(observations.compactMap { $0["id"] as? String }).count == observations.count)
        #expect(Set(points.compactMap { ($0["header"] as? [String: Any])?["uuid"] as? String }).count == points.count)

        let study = "sqlite:" + dir.file("study.sqlite")
        let refused = try cli.run(["study", "load", dir.file("fhir.bundle"), "--key", dir.file("lab.key"), "--into", study])
        #expect(refused.status != 0 && refused.stderr.contains("which study load does not read"))
    }
}

extension StudyLoadTests {
    /// `--since-last` judges what the last bundle held by the grant in force for each category
    /// then: sleep shared daily under a later grant was not shared raw by the earlier one.
    @Test func sinceLastGoesByTheGrantInForceAtTheLastExport() throws {
        let dir = TemporaryDirectory("study-since-last-grants")
        #expect(try cli.run(["keygen", "--out", dir.file("lab")]).status == 0)
        let a = try participant(dir, "a", firstDay: (2024, 3, 1))
        #expect(try cli.run(a.args(["grant", "lab", "--categories", "activity,sleep", "--granularity", "raw"])).status == 0)
        #expect(try cli.run(a.args(["grant", "lab", "--categories", "sleep", "--granularity", "daily"])).status == 0)
        try export(a, dir.file("first.bundle"))
        #expect(try cli.run(a.args(["grant", "lab", "--categories", "sleep", "--granularity", "raw"])).status == 0)
        let next = try cli.run(a.args(["export", "lab", "--out", dir.file("next.bundle"), "--since-last", "--json"]))
        #expect(next.status == 0, "\(next.stderr)")
        let counts = try #require(try JSONSerialization.jsonObject(with: Data(next.stdout.utf8)) as? [String: Any])["counts"] as? [String: Int]
        try export(a, dir.file("full.bundle"))
        let full = try #require(try JSONSerialization.jsonObject(with: Data(try cli.run(a.args(["history", "--json"])).stdout.utf8)) as? [[String: Any]])
        let fullCounts = (full.last { $0["kind"] as? String == "export" }?["detail"] as? [String: String])?["counts"] ?? ""
        // Every raw sleep line is new to the lab; activity raw was held and stays out.
        #expect(counts?["activity"] == 0)
        let sleepRecords = ExportRecordCount.records(in: try ExportRecordCount.xml(inZip: dir.file("a.zip")), typePrefix: "HKCategoryTypeIdentifierSleepAnalysis")
        #expect(counts?["sleep"] == sleepRecords && fullCounts.contains("sleep:\(sleepRecords)"), "\(String(describing: counts)) against \(fullCounts), \(sleepRecords) in the export")
    }

    /// Identical lines (HealthKit keeps a sample written twice as two) stay as many rows as the
    /// bundle has, in a participant's first bundle (copied straight into `samples` in
    /// PostgreSQL, its copies numbered through staging, a new month's partition made mid-copy)
    /// as in a later one, and a later bundle holding them again adds none.
    @Test(arguments: ["sqlite", "postgres"])
    func identicalLinesStayAsManyAndLoadOnce(backend: String) throws {
        let dir = TemporaryDirectory("study-same-\(backend)")
        let server = backend == "postgres" ? try PostgresServer() : nil
        let study = Study(url: server?.url ?? "sqlite:" + dir.file("study.sqlite"), sqlitePath: server == nil ? dir.file("study.sqlite") : nil, server: server)
        #expect(try cli.run(["keygen", "--out", dir.file("lab")]).status == 0)
        let pass = dir.passphraseFile("p.pass", "study passphrase of p")
        var p = Participant(vault: dir.file("p"), pass: pass, fingerprint: "")
        try makeVault(at: p.vault, passphraseFile: p.pass)
        func heart(_ day: String, _ value: Int) -> String {
            #"<Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" startDate="\#(day) 08:00:00 +0100" endDate="\#(day) 08:00:00 +0100" value="\#(value)"/>"#
        }
        let xml = dir.file("export.xml")
        try Data("""
            <?xml version="1.0" encoding="UTF-8"?>
            <HealthData locale="en_US">
             \(heart("2024-03-01", 71))
             \(heart("2024-03-01", 71))
             \(heart("2024-03-02", 64))
             \(heart("2024-03-01", 71))
             \(heart("2024-04-02", 80))
             \(heart("2024-04-02", 80))
            </HealthData>
            """.utf8).write(to: URL(fileURLWithPath: xml))
        #expect(try cli.run(p.args(["import", xml])).status == 0)
        #expect(try cli.run(p.args(["recipient", "add", "lab", "--key", dir.file("lab.pub")])).status == 0)
        p.fingerprint = (try JSONSerialization.jsonObject(with: Data(try cli.run(p.args(["identity", "--json"])).stdout.utf8)) as! [String: String])["fingerprint"]!
        #expect(try cli.run(p.args(["grant", "lab", "--categories", "heart", "--granularity", "raw"])).status == 0)
        try export(p, dir.file("p1.bundle"))
        #expect(try lines(of: dir.file("p1.bundle"), in: dir)["raw"] == 6)
        let roster = dir.file("roster.csv")
        try Data("participant,fingerprint\nP-001,\(p.fingerprint)\n".utf8).write(to: URL(fileURLWithPath: roster))

        // Staged rows sent one at a time, so the pauses between direct and staged copies happen.
        let first = try CLIRunner(environment: ["HEALTHVAULT_STUDY_STAGED_LIMIT": "1"]).run(
            ["study", "load", dir.file("p1.bundle"), "--key", dir.file("lab.key"), "--into", study.url, "--roster", roster, "--json"])
        #expect(first.status == 0, "\(first.stderr)")
        let json = (try? JSONSerialization.jsonObject(with: Data(first.stdout.utf8)) as? [String: Any]) ?? [:]
        #expect(json["rows"] as? Int == 6 && json["duplicates"] as? Int == 0)
        let numbered = "SELECT count(*) FROM samples WHERE value = 71 AND occurrence IN (1, 2, 3)"
        #expect(try study.count(numbered) == 3)
        #expect(try study.count("SELECT count(*) FROM samples WHERE value = 80 AND occurrence IN (1, 2)") == 2)
        if let server {
            #expect(try server.psql("SELECT count(*) FROM samples_2024_04") == "2")
            #expect(try server.psql("SELECT count(*) FROM samples_default") == "0")
        }

        // A second, full bundle holds them all again: nothing added.
        try export(p, dir.file("p2.bundle"))
        let second = try load(study, [dir.file("p2.bundle")], dir: dir, roster: roster)
        #expect(second.status == 0 && second.json["rows"] as? Int == 0 && second.json["duplicates"] as? Int == 6)
        #expect(try study.count("SELECT count(*) FROM samples") == 6)
    }
}
