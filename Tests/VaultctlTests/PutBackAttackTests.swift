import Foundation
import SyntheticHealth
import Testing

/// Issue 35's attacks, done as an attacker does them: copy some of the vault's files (what a sync
/// client's version history, a backup tool or malware running as the person keeps), let the
/// person act, put the old files (or one block of one) back, then run the commands a person runs.
/// Each ends in a clear refusal naming the damage, or in nothing erased shown or exported; never
/// in a silent success.
@Suite(.timeLimit(.minutes(10))) struct PutBackAttackTests {
    let cli = CLIRunner()

    /// A vault holding ten (or `days`) generated days from 2024-02-25 (heart rate on each), a
    /// researcher "lab" granted raw heart data.
    final class Person {
        let dir = TemporaryDirectory("put-back")
        let cli: CLIRunner
        var vault: String { dir.path + "/vault" }
        let pass: String

        init(cli: CLIRunner, days: Int = 10) throws {
            self.cli = cli
            pass = dir.passphraseFile("pass", "put-back attack passphrase")
            let zip = dir.path + "/export.zip"
            try SyntheticExport.writeZip(to: zip, options: .init(days: days, firstDay: (2024, 2, 25), tripStart: 100))
            try makeVault(at: dir.path + "/vault", passphraseFile: pass)
            try succeed(["import", zip])
            #expect(try cli.run(["keygen", "--out", dir.path + "/lab"]).status == 0)
            try succeed(["recipient", "add", "lab", "--key", dir.path + "/lab.pub"])
            try succeed(["grant", "lab", "--categories", "heart", "--granularity", "raw", "--purpose", "attack test"])
        }

        func run(_ args: [String]) throws -> CLIRunner.Result {
            try cli.run(args + ["--vault", vault, "--passphrase-file", pass])
        }

        @discardableResult
        func succeed(_ args: [String]) throws -> CLIRunner.Result {
            let result = try run(args)
            #expect(result.status == 0, "vaultctl \(args.joined(separator: " ")): \(result.stderr)")
            return result
        }

        /// The periods `summary heart-rate --by day` lists, or nil when the command refused.
        func heartDays() throws -> [String]? {
            let result = try run(["summary", "heart-rate", "--json"])
            guard result.status == 0 else { return nil }
            let rows = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
            return rows.map { $0["period"] as! String }
        }

        func copy(_ name: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: vault + "/" + name)) }

        /// Puts `current` back as the read models with block `index` (of the page cipher's layout:
        /// a 64-byte header, then blocks of 4096 + 44 bytes) taken from `old`.
        func putBackReadModels(_ current: Data, withBlock index: Int, of old: Data) throws {
            var spliced = current
            let range = PutBackAttackTests.block(index)
            spliced.replaceSubrange(range, with: old[range])
            try putBack("projections.db", spliced)
        }

        /// `verify --json`'s exit status and problems.
        func verifyProblems() throws -> (status: Int32, problems: [String]) {
            let verify = try run(["verify", "--json"])
            let report = try #require(try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as? [String: Any])
            return (verify.status, report["problems"] as? [String] ?? [])
        }
        func putBack(_ name: String, _ bytes: Data) throws { try bytes.write(to: URL(fileURLWithPath: vault + "/" + name)) }
    }

    static let march = (1...5).map { "2024-03-0\($0)" }

    /// The bytes of read-model block `index` in the file.
    static func block(_ index: Int) -> Range<Int> { (64 + index * 4140)..<(64 + (index + 1) * 4140) }
    static let february = (25...29).map { "2024-02-\($0)" }

    /// Attack 1: `keys.sealed` and `events.head` copied before the erase, put back after it (the
    /// erase the last commit, so the head is one commit behind, as a crash could leave it).
    @Test func anOldKeyTableAndHeadPutBackAfterAnEraseAreRefused() throws {
        let p = try Person(cli: cli)
        #expect(try p.heartDays() == Self.february + Self.march)
        let keys = try p.copy("keys.sealed"), head = try p.copy("events.head")
        try p.succeed(["erase", "--categories", "heart", "--from", "2024-02", "--to", "2024-02", "--yes"])
        #expect(try p.heartDays() == Self.march)

        try p.putBack("keys.sealed", keys)
        try p.putBack("events.head", head)
        let verify = try p.run(["verify", "--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as? [String: Any])
        #expect(verify.status != 0 && report["ok"] as? Bool == false)
        let problems = try #require(report["problems"] as? [String])
        #expect(problems.count == 1 && problems[0].contains("older copies put back")
                && problems[0].contains("the log records erasure"), "\(problems)")
        for command in [["summary", "heart-rate"], ["types"], ["export", "lab", "--out", p.dir.path + "/after.bundle"], ["goals", "set", "move", "500"]] {
            let refused = try p.run(command)
            #expect(refused.status != 0 && refused.stderr.contains("events.head and the key table it names are older copies put back"),
                    "vaultctl \(command.joined(separator: " ")): \(refused.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: p.dir.path + "/after.bundle"))
        // Nothing was changed by the refusals: the files put back are still the attacker's.
        #expect(try p.copy("keys.sealed") == keys && p.copy("events.head") == head)
    }

    /// The same copies put back after the erase and one more commit: two commits past the head.
    @Test func anOldKeyTableAndHeadPutBackTwoCommitsLaterAreRefused() throws {
        let p = try Person(cli: cli)
        let keys = try p.copy("keys.sealed"), head = try p.copy("events.head")
        try p.succeed(["erase", "--categories", "heart", "--from", "2024-02", "--to", "2024-02", "--yes"])
        try p.succeed(["goals", "set", "move", "500", "--from", "2024-03-01"])
        try p.putBack("keys.sealed", keys)
        try p.putBack("events.head", head)
        let refused = try p.run(["summary", "heart-rate"])
        #expect(refused.status != 0 && refused.stderr.contains("holds 2 commit(s)") && refused.stderr.contains("an older head record was put back"),
                "\(refused.stderr)")
    }

    /// Attack 2: the read models copied before the erase; after it, each block of the old file
    /// spliced into the current one (among them the block holding the stored log position), and
    /// the whole old file put back. No command shows an erased day.
    @Test func oldReadModelBlocksSplicedInShowNothingErased() throws {
        let p = try Person(cli: cli)
        #expect(try p.heartDays() == Self.february + Self.march)
        let old = try p.copy("projections.db")
        try p.succeed(["erase", "--categories", "heart", "--from", "2024-02", "--to", "2024-02", "--yes"])
        #expect(try p.heartDays() == Self.march)
        let current = try p.copy("projections.db")
        let blocks = min(old.count, current.count) / 4140
        #expect(blocks >= 8, "the read models hold \(blocks) blocks")
        for index in 0..<blocks {
            try p.putBackReadModels(current, withBlock: index, of: old)
            // Every old block fails in the new file (a fresh file key): verify names the file...
            let (status, problems) = try p.verifyProblems()
            #expect(status != 0 && problems.count == 1 && problems[0].contains("projections.db: the read models do not authenticate"),
                    "block \(index): \(problems)")
            // ...and a command shows no erased day, whether it read that block (and rebuilt) or not.
            let result = try p.run(["summary", "heart-rate", "--json"])
            #expect(result.status == 0, "block \(index): \(result.stderr)")
            let rows = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
            #expect(rows.map { $0["period"] as! String } == Self.march, "block \(index) of the old file spliced in")
        }
        try p.putBack("projections.db", old)
        #expect(try p.heartDays() == Self.march)
    }

    /// Attack 2 on a free page: an erase leaves pages of the fresh file free, which SQLite's
    /// `quick_check` never reads; an old block put over one is still named by `verify` (every page
    /// is read through the cipher). Found when a layout change put a free page among the blocks the
    /// test above splices, and verify said nothing of it.
    @Test func anOldBlockOverAFreePageIsNamed() throws {
        // Forty days, so that erasing March's thirty-one frees whole pages of the read models.
        let p = try Person(cli: cli, days: 40)
        let old = try p.copy("projections.db")
        try p.succeed(["erase", "--categories", "heart", "--from", "2024-03", "--to", "2024-03", "--yes"])
        let current = try p.copy("projections.db")
        let used = try p.run(["sql", "--json", "SELECT DISTINCT pageno FROM dbstat"])
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(used.stdout.utf8)) as? [[String: Any]], "\(used.stderr)")
        let inUse = Set(rows.compactMap { $0["pageno"] as? Int })
        let pages = min(old.count, current.count) / 4140
        let page = try #require((1...pages).first { !inUse.contains($0) }, "the erase left no free page among \(pages)")
        try p.putBackReadModels(current, withBlock: page - 1, of: old)
        let (status, problems) = try p.verifyProblems()
        #expect(status != 0 && problems.count == 1 && problems[0].contains("projections.db: the read models do not authenticate"),
                "page \(page): \(problems)")
        #expect(try p.heartDays()?.allSatisfy { !$0.hasPrefix("2024-03") } == true)
    }

    /// Attack 2 without an erasure: blocks of the same file from before a goal change put back
    /// authenticate (same file key), so commands may answer from them; `verify` compares the read
    /// models with a rebuild from the log and names the tables that differ. Every block that
    /// changed, put back alone, is named, but the first (SQLite's header page, whose change counter
    /// alone moved).
    @Test func staleBlocksOfTheSameFileAreNamedByVerify() throws {
        let p = try Person(cli: cli)
        _ = try p.succeed(["rings"])
        let old = try p.copy("projections.db")
        try p.succeed(["goals", "set", "move", "900", "--from", "2024-03-01"])
        _ = try p.succeed(["rings"])
        let current = try p.copy("projections.db")
        let changed = (0..<(min(old.count, current.count) / 4140)).filter { old[Self.block($0)] != current[Self.block($0)] }
        #expect(changed.count >= 3 && changed.first == 0, "\(changed)")
        for index in changed {
            try p.putBackReadModels(current, withBlock: index, of: old)
            let (status, problems) = try p.verifyProblems()
            if index == 0 {
                #expect(status == 0 && problems.isEmpty, "block 0: \(problems)")
            } else {
                #expect(status != 0 && problems.count == 1 && problems[0].contains("projections.db: the read models differ from the log in"),
                        "block \(index): \(problems)")
            }
        }
        // `rebuild` makes them anew, and verify agrees.
        try p.succeed(["rebuild"])
        #expect(try p.succeed(["verify", "--json"]).stdout.contains("\"ok\":true"))
    }

    /// Attack 3: the head put back one commit and the log cut inside the frame of that commit, which
    /// is byte for byte what a crash in that append leaves. The writer that cuts it says so, keeps
    /// the bytes, and the audit trail records the cut with the bytes' BLAKE2b-256.
    @Test func aCutTailIsNeverSilent() throws {
        let p = try Person(cli: cli)
        let head = try p.copy("events.head")
        try p.succeed(["goals", "set", "move", "500", "--from", "2024-03-01"])
        let log = try p.copy("events.log")
        try p.putBack("events.head", head)
        let cut = log.prefix(log.count - 5)
        try p.putBack("events.log", cut)
        let headSize = UInt64(try #require(try FileManager.default.attributesOfItem(atPath: p.vault + "/events.head")[.size] as? NSNumber).uint64Value)
        #expect(headSize == 220)

        let writer = try p.succeed(["goals", "set", "exercise", "40", "--from", "2024-03-01"])
        let kept = p.vault + "/events.log.torn.1"
        let keptBytes = try Data(contentsOf: URL(fileURLWithPath: kept))
        #expect(writer.stderr.contains("warning: the log ended in \(keptBytes.count) bytes after its last commit")
                && writer.stderr.contains("kept in \(kept)"), "\(writer.stderr)")
        // The kept bytes are the frame that was cut, as it was on disk.
        #expect(keptBytes == cut.suffix(keptBytes.count))
        let history = try #require(try JSONSerialization.jsonObject(with: Data(try p.succeed(["history", "--json"]).stdout.utf8)) as? [[String: Any]])
        let entry = try #require(history.first { $0["kind"] as? String == "tail-cut" }?["detail"] as? [String: String])
        #expect(entry["length"] == "\(keptBytes.count)" && entry["offset"] == "\(cut.count - keptBytes.count)" && entry["keptAs"] == "events.log.torn.1")
        // BLAKE2b-256 as coreutils computes it, not as the vault does.
        let b2sum = Process()
        b2sum.executableURL = URL(fileURLWithPath: "/usr/bin/b2sum")
        b2sum.arguments = ["-l", "256", kept]
        let out = Pipe()
        b2sum.standardOutput = out
        try b2sum.run()
        let printed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        b2sum.waitUntilExit()
        #expect(printed.split(separator: " ").first.map(String.init) == entry["blake2b"])
        // The goal that was cut is gone from the log, the one set after it is in force.
        let goals = try p.succeed(["goals", "--json"]).stdout
        #expect(!goals.contains("\"move\"") && goals.contains("\"exercise\""), "\(goals)")
        #expect(try p.succeed(["verify", "--json"]).stdout.contains("\"ok\":true"))
    }
}
