import Envelope
import Foundation
import SecureMemory
import SyntheticHealth
import Testing

/// `vaultctl import`, `grant`, `export`, `passwd` (with and without `--rekey`), `rebuild`, `erase`, `backup` and `bundle open` SIGKILLed at random
/// moments. After every kill: `verify` passes, whatever a command acknowledged (exit 0 before the
/// kill) is there, and nothing half-written is visible: the read models after a killed `rebuild`
/// equal a finished one's, an opened bundle's folder is complete or absent, and the backup
/// verifies (the previous run's, or the killed one's if it committed) and restores. At the end, the
/// vault's figures equal a clean run's.
///
/// CI runs `HEALTHVAULT_KILLS` (default 100) kills; `make killloop` runs 1,000. The vault is made
/// with the cheapest KDF (`makeVault`): the kills land in the commands' work, not in Argon2id.
@Suite(.timeLimit(.minutes(60))) struct KillLoopTests {
    let cli = CLIRunner()

    final class Setup {
        let dir = TemporaryDirectory("killloop")
        let vault: String
        let passphrases: [String]
        let exports: [String]
        var current = 0

        init() throws {
            vault = dir.path + "/vault"
            passphrases = [dir.passphraseFile("p0", "kill loop passphrase zero"), dir.passphraseFile("p1", "kill loop passphrase one")]
            // Days that do not overlap: two exports' different summaries of one day would make the
            // result depend on import order (the later summary wins), which a clean run cannot match.
            exports = [dir.path + "/a.zip", dir.path + "/b.zip"]
            try SyntheticExport.writeZip(to: exports[0], options: .init(days: 6, firstDay: (2024, 3, 27), seed: 3, tripStart: 100))
            try SyntheticExport.writeZip(to: exports[1], options: .init(days: 9, firstDay: (2024, 4, 2), seed: 4, tripStart: 100))
        }

        func args(_ command: [String], passphrase: Int? = nil) -> [String] {
            command + ["--vault", vault, "--passphrase-file", passphrases[passphrase ?? current]]
        }
    }

    enum Operation: CaseIterable { case importA, importB, grant, export, bundleOpen, passwd, rebuild, erase, backup }

    @Test func randomKillsNeverLoseAcknowledgedWorkOrShowHalfWrittenState() throws {
        let kills = Int(ProcessInfo.processInfo.environment["HEALTHVAULT_KILLS"] ?? "") ?? 100
        let s = try Setup()
        try makeVault(at: s.vault, passphraseFile: s.passphrases[0])
        #expect(try cli.run(["keygen", "--out", s.dir.path + "/lab"]).status == 0)
        #expect(try cli.run(s.args(["recipient", "add", "Kill Loop Lab", "--key", s.dir.path + "/lab.pub"])).status == 0)
        // The kills' moments, drawn from a seed every failure names (timing still varies run to run).
        let seed = TestSeed()
        var rng = seed.generator
        var killed = 0, acknowledged = 0, exportsAcknowledged: [String] = []
        var openedBundle: (path: String, files: [String: Data])?  // the last whole bundle, and what it opens to
        var opensChecked = 0, rebuildsChecked = 0, erasesChecked = 0, backupsChecked = 0
        var round = 0
        var moments = KillMoments()
        while killed < kills {
            round += 1
            let operation = Operation.allCases[round % Operation.allCases.count]
            let bundle = s.dir.path + "/bundle-\(round).bundle"
            let command: [String]
            switch operation {
            // --allow-erased: sleep comes back after an erase, so the next erase has months to erase.
            case .importA: command = s.args(["import", s.exports[0], "--allow-erased"])
            case .importB: command = s.args(["import", s.exports[1], "--allow-erased"])
            case .grant: command = s.args(["grant", "Kill Loop Lab", "--categories", "activity", "--granularity", "daily"])
            case .export: command = s.args(["export", "Kill Loop Lab", "--out", bundle])
            // Every other passwd also replaces the master key and rewrites the log (--rekey).
            case .passwd: command = s.args(["passwd", "--new-passphrase-file", s.passphrases[1 - s.current]] + (round / 7 % 2 == 0 ? ["--rekey"] : []))
            case .rebuild: command = s.args(["rebuild"])
            // Sleep: no figure the final comparison reads; the imports take it back (--allow-erased),
            // so each erase has months to erase.
            case .erase: command = s.args(["erase", "--categories", "sleep", "--yes", "--json"])
            case .backup: command = s.args(["backup", s.dir.path + "/backup", "--json"])
            case .bundleOpen:
                guard let openedBundle else { continue }
                command = ["bundle", "open", openedBundle.path, "--key", s.dir.path + "/lab.key", "--out", s.dir.path + "/open-\(round)", "--any-sender"]
            }
            let newPassphrase = s.passphrases[1 - s.current]
            // The moment falls within the command's life (`KillMoments`). `passwd --rekey` is timed
            // apart from `passwd`: it also rewrites the log.
            let kind = command.contains("--rekey") ? "passwd --rekey" : "\(operation)"
            let (finished, output, seconds) = try cli.runKilledCapturing(command, after: moments.draw(for: kind, using: &rng))
            if finished { acknowledged += 1 } else { killed += 1 }
            moments.record(kind, finished: finished, seconds: seconds)

            // Which passphrase opens it now: passwd may or may not have happened.
            var verify = try cli.run(s.args(["verify"]))
            if verify.status != 0, verify.stderr.contains("wrong passphrase") {
                s.current = 1 - s.current
                verify = try cli.run(s.args(["verify"]))
            }
            #expect(verify.status == 0, "round \(round), \(seed) (\(operation)): \(verify.stderr)")
            if operation == .passwd && finished {
                #expect(s.passphrases[s.current] == newPassphrase, "round \(round), \(seed): an acknowledged passwd was lost")
            }
            if operation == .export {
                let history = try cli.run(s.args(["history", "--json"]))
                let exports = (try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [[String: Any]] ?? [])
                    .filter { $0["kind"] as? String == "export" }.compactMap { ($0["detail"] as? [String: String])?["bundleHash"] }
                if FileManager.default.fileExists(atPath: bundle) {
                    // A bundle under its name is whole, opens, and is in the audit trail.
                    let out = s.dir.path + "/out-\(round)"
                    let opened = try cli.run(["bundle", "open", bundle, "--key", s.dir.path + "/lab.key", "--out", out, "--any-sender"])
                    #expect(opened.status == 0, "round \(round), \(seed): \(opened.stderr)")
                    let hash = Digest.of(Array(try Data(contentsOf: URL(fileURLWithPath: bundle)))).hex
                    #expect(exports.contains(hash), "round \(round), \(seed): a bundle exists that the audit trail does not list")
                    openedBundle = (bundle, try Self.contents(of: out))
                    try? FileManager.default.removeItem(atPath: out)
                    if finished { exportsAcknowledged.append(hash) }
                } else {
                    #expect(!finished, "round \(round), \(seed): an acknowledged export left no bundle")
                }
            }
            if operation == .bundleOpen, let openedBundle {
                // The output folder is there whole, or not at all.
                let out = s.dir.path + "/open-\(round)"
                if FileManager.default.fileExists(atPath: out) {
                    #expect(try Self.contents(of: out) == openedBundle.files, "round \(round), \(seed): a partly opened bundle is visible")
                    opensChecked += 1
                } else {
                    #expect(!finished, "round \(round), \(seed): an acknowledged bundle open wrote nothing")
                }
                try? FileManager.default.removeItem(atPath: out)
            }
            if operation == .erase && finished {
                // An acknowledged erase is in the log's count of erased events at once.
                let erased = (try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])?["samplesErased"] as? Int
                let report = try JSONSerialization.jsonObject(with: Data(try cli.run(s.args(["verify", "--json"])).stdout.utf8)) as? [String: Any]
                #expect(erased != nil && (report?["erasedEvents"] as? Int ?? -1) >= erased!, "round \(round), \(seed): \(output)")
                if (erased ?? 0) > 0 { erasesChecked += 1 }
            }
            if operation == .rebuild {
                // Whatever the kill left, the next command's read models equal a finished rebuild's.
                let queries = [["rings", "--json"], ["summary", "steps", "--json"], ["summary", "heart-rate", "--json"]]
                let before = try queries.map { try cli.run(s.args($0)) }
                #expect(try cli.run(s.args(["rebuild"])).status == 0)
                let after = try queries.map { try cli.run(s.args($0)) }
                for (b, a) in zip(before, after) {
                    #expect(b.status == 0 && b.stdout == a.stdout, "round \(round), \(seed): \(b.stderr)")
                }
                rebuildsChecked += 1
            }
            if operation == .backup, FileManager.default.fileExists(atPath: s.dir.path + "/backup/CURRENT") {
                // The backup verifies and restores, under the passphrase of its last run (passwd may have changed it since).
                let restored = s.dir.path + "/restored-\(round)"
                var restore = try cli.run(s.args(["restore", s.dir.path + "/backup", "--to", restored]))
                if restore.status != 0, restore.stderr.contains("wrong passphrase") {
                    restore = try cli.run(s.args(["restore", s.dir.path + "/backup", "--to", restored], passphrase: 1 - s.current))
                }
                #expect(restore.status == 0, "round \(round), \(seed): \(restore.stderr)")
                if finished, let done = try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any] {
                    // An acknowledged run's position is what the backup restores to (nothing wrote since).
                    #expect(restore.stdout.contains("restored \(done["position"] as? Int ?? -1) events"), "round \(round), \(seed): \(restore.stdout)")
                }
                try? FileManager.default.removeItem(atPath: restored)
                backupsChecked += 1
            }
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: s.vault).filter { $0.contains(".tmp") }
            #expect(leftovers.allSatisfy { $0.contains(".tmp.") || $0.hasSuffix(".tmp") }, "round \(round), \(seed): \(leftovers)")
        }

        // Finish the work, then compare with a clean run.
        #expect(try cli.run(s.args(["import", s.exports[0], s.exports[1]])).status == 0)
        let clean = try Setup()
        try makeVault(at: clean.vault, passphraseFile: clean.passphrases[0])
        #expect(try cli.run(clean.args(["import", s.exports[0], s.exports[1]])).status == 0)
        for command in [["rings", "--json"], ["summary", "steps", "--json"], ["summary", "heart-rate", "--by", "week", "--json"]] {
            let mine = try cli.run(s.args(command)), theirs = try cli.run(clean.args(command))
            // On a difference, the first line that differs (the whole outputs run to megabytes).
            let firstDifference = zip(mine.stdout.split(separator: "\n"), theirs.stdout.split(separator: "\n")).first { $0 != $1 }
            let same = mine.stdout == theirs.stdout
            #expect(same, "\(command), \(seed): \(firstDifference.map { "\($0.0) | clean: \($0.1)" } ?? "one output is longer") \(mine.stderr) \(theirs.stderr)")
        }
        let again = try cli.run(s.args(["import", s.exports[0], s.exports[1], "--json"]))
        #expect((try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])?["added"] as? Int == 0)
        #expect(try cli.run(s.args(["verify"])).status == 0)
        let history = try JSONSerialization.jsonObject(with: Data(try cli.run(s.args(["history", "--json"])).stdout.utf8)) as! [[String: Any]]
        let recorded = history.compactMap { ($0["detail"] as? [String: String])?["bundleHash"] }
        #expect(Set(exportsAcknowledged).isSubset(of: Set(recorded)))
        #expect(opensChecked > 0 && rebuildsChecked > 0 && backupsChecked > 0)
        // Every command was killed, `passwd --rekey` apart from `passwd`.
        let kinds = ["importA", "importB", "grant", "export", "bundleOpen", "passwd", "passwd --rekey", "rebuild", "erase", "backup"]
        #expect(kinds.allSatisfy { moments.kills[$0, default: 0] > 0 }, "kills per command: \(moments.kills)")
        print("kill loop: kills per command: \(kinds.map { "\($0) \(moments.kills[$0, default: 0])" }.joined(separator: ", "))")
        print("kill loop: \(killed) kills, \(acknowledged) commands finished before their kill, \(exportsAcknowledged.count) acknowledged exports checked, \(opensChecked) opened bundle folders and \(rebuildsChecked) killed rebuilds compared, \(erasesChecked) acknowledged erases of sleep data checked, \(backupsChecked) backups restored")
    }

    /// Every file under `directory` (relative path to bytes).
    static func contents(of directory: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        guard let walker = FileManager.default.enumerator(atPath: directory) else { return files }
        while let relative = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: directory + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue {
                files[relative] = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + relative))
            }
        }
        return files
    }
}
