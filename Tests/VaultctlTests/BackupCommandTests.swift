import Foundation
import Testing

/// The backup commands as the contract fixes them (round 3, "Backup and restore"), run as a
/// person runs them; and what a person meets when the destination is wrong or was tampered with.
@Suite(.timeLimit(.minutes(10))) struct BackupCommandTests {
    func object(_ result: CLIRunner.Result) throws -> Any {
        #expect(result.status == 0, "\(result.stderr)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
    }

    @Test func backupListVerifyRestoreAndEraseSayWhatTheContractSays() throws {
        var cli = CLIRunner()
        cli.environment["TZ"] = "Europe/Berlin"
        let vault = try CLIVault(cli: cli)
        let run = vault.run
        for (day, reps) in [("2024-01-10", 10), ("2024-02-10", 12)] {
            #expect(try run(["practice", "squats", "--reps", "\(reps)", "--at", day + " 08:00"]).status == 0)
        }
        let destination = vault.file("usb/healthvault")
        try FileManager.default.createDirectory(atPath: vault.file("usb"), withIntermediateDirectories: true)
        let first = try #require(try object(run(["backup", destination, "--json"])) as? [String: Any])
        #expect(Set(first.keys) == ["destination", "position", "bytesWritten", "erasuresApplied"])
        #expect(first["destination"] as? String == destination && first["erasuresApplied"] as? Int == 0)
        let list = try #require(try object(run(["backup", "list", "--json"])) as? [[String: Any]])
        #expect(list.count == 1 && Set(list[0].keys) == ["destination", "lastRun", "position", "bytes", "holdsErasedKeys"])
        #expect(list[0]["position"] as? Int == first["position"] as? Int && list[0]["holdsErasedKeys"] as? Bool == false)

        // The erase names the backup that still holds January's key, until its next run.
        let erase = try run(["erase", "--categories", "workouts", "--from", "2024-01", "--to", "2024-01", "--yes"])
        #expect(erase.status == 0 && erase.stderr.contains("the backup at \(destination) still holds the erased months' keys"), "\(erase.stderr)")
        #expect((try object(run(["backup", "list", "--json"])) as? [[String: Any]])?.first?["holdsErasedKeys"] as? Bool == true)
        let second = try #require(try object(run(["backup", destination, "--json"])) as? [String: Any])
        #expect(second["erasuresApplied"] as? Int == 1)
        #expect((try object(run(["backup", "list", "--json"])) as? [[String: Any]])?.first?["holdsErasedKeys"] as? Bool == false)

        let verified = try run(["backup", "verify", destination])
        #expect(verified.status == 0 && verified.stdout.hasPrefix("ok: "), "\(verified.stdout)\(verified.stderr)")
        let restored = vault.file("restored")
        let restore = try run(["restore", destination, "--to", restored])
        #expect(restore.status == 0 && restore.stdout.hasPrefix("restored \(second["position"] as? Int ?? -1) events into \(restored)"), "\(restore.stdout)")
        let stats = try cli.run(["stats", "--by", "month", "--json", "--vault", restored, "--passphrase-file", vault.passphraseFile])
        #expect((try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [[String: Any]])?.map { $0["period"] as? String } == ["2024-02"])

        // Refusals, each one line naming the place.
        let again = try run(["restore", destination, "--to", restored])
        #expect(again.status != 0 && again.stderr.contains("\(restored) is not empty; restore into a new or empty directory"), "\(again.stderr)")
        let unplugged = try run(["backup", vault.file("not-mounted/healthvault")])
        #expect(unplugged.status != 0 && unplugged.stderr.contains("does not exist: is the disk mounted?"), "\(unplugged.stderr)")
        let other = vault.file("photos")
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: other + "/holiday.jpg", contents: Data([1, 2, 3])))
        let foreign = try run(["backup", other])
        #expect(foreign.status != 0 && foreign.stderr.contains("holds other files and no healthvault backup"), "\(foreign.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: other) == ["holiday.jpg"])

        // A byte of the backup's log flipped, the way someone with the disk would: verify names it.
        let current = try String(contentsOfFile: destination + "/CURRENT", encoding: .utf8).split(separator: " ")[1].trimmingCharacters(in: .whitespacesAndNewlines)
        let log = try FileHandle(forUpdating: URL(fileURLWithPath: destination + "/" + current))
        try log.seek(toOffset: 200)
        let byte = try #require(try log.read(upToCount: 1)).first!
        try log.seek(toOffset: 200)
        try log.write(contentsOf: Data([byte ^ 0x40]))
        try log.close()
        let damaged = try run(["backup", "verify", destination])
        #expect(damaged.status != 0 && damaged.stdout.hasPrefix("DAMAGED: ") && damaged.stdout.contains("offset"), "\(damaged.stdout)\(damaged.stderr)")
    }

    /// A run as a timer or a script runs it, with no passphrase anywhere: into a folder that exists
    /// it backs up, and `backup list` (with the passphrase) knows it; where it must ask (a folder
    /// that does not exist: only the list says whether it is a disk not mounted) and cannot, it
    /// says how to give one, and makes nothing.
    @Test func aRunWithoutAnyPassphraseBacksUpAndSaysWhenItNeedsOne() throws {
        let vault = try CLIVault()
        #expect(try vault.run(["practice", "squats", "--reps", "10", "--at", "2024-01-10 08:00"]).status == 0)
        let destination = vault.file("nas")
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: false)
        let first = try #require(try object(vault.cli.run(["backup", destination, "--json", "--vault", vault.path])) as? [String: Any])
        #expect(first["destination"] as? String == destination && first["erasuresApplied"] as? Int == 0 && (first["position"] as? Int ?? 0) > 2)
        let list = try #require(try object(vault.run(["backup", "list", "--json"])) as? [[String: Any]])
        #expect(list.map { $0["destination"] as? String } == [destination] && list.map { $0["position"] as? Int } == [first["position"] as? Int])
        let verified = try vault.run(["backup", "verify", destination])
        #expect(verified.status == 0 && verified.stdout.hasPrefix("ok: "), "\(verified.stdout)\(verified.stderr)")

        let gone = vault.file("gone")
        let missing = try vault.cli.run(["backup", gone, "--vault", vault.path])
        #expect(missing.status != 0 && missing.stderr.contains("no passphrase given and no terminal to ask on: pass --passphrase-file FILE or set HEALTHVAULT_PASSPHRASE"),
                "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: gone))
    }

    /// A destination's head altered to claim more events than the vault holds, the way someone with
    /// the disk could: without the key the claim cannot be judged and the run stops; with the
    /// passphrase it does not authenticate, and the run copies the vault whole.
    @Test func anAlteredHeadAtTheDestinationIsJudgedWithTheKey() throws {
        let vault = try CLIVault()
        #expect(try vault.run(["practice", "squats", "--reps", "10", "--at", "2024-01-10 08:00"]).status == 0)
        let destination = vault.file("nas")
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: false)
        #expect(try vault.run(["backup", destination]).status == 0)
        let state = try String(contentsOfFile: destination + "/CURRENT", encoding: .utf8).split(separator: " ")[0]
        let head = URL(fileURLWithPath: destination + "/" + state + "/events.head")
        var bytes = try Data(contentsOf: head)
        // The committed event count: after the magic (8), version and reserved (4), vault id (16), sequence (8).
        bytes.replaceSubrange(36..<44, with: [UInt8](repeating: 0x7F, count: 8))
        try bytes.write(to: head)
        let bare = try vault.cli.run(["backup", destination, "--vault", vault.path])
        #expect(bare.status != 0 && bare.stderr.contains("no passphrase given and no terminal to ask on"), "\(bare.stderr)")
        let keyed = try #require(try object(vault.run(["backup", destination, "--json"])) as? [String: Any])
        #expect((keyed["bytesWritten"] as? Int ?? 0) > (try FileManager.default.attributesOfItem(atPath: vault.path + "/events.log")[.size] as? Int ?? .max) - 1)
        let verified = try vault.run(["backup", "verify", destination])
        #expect(verified.status == 0 && verified.stdout.hasPrefix("ok: "), "\(verified.stdout)\(verified.stderr)")
    }
}
