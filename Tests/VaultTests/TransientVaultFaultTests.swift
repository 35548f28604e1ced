import Envelope
import EventLog
import Foundation
@testable import HealthModel
import Projections
import ResearchBundle
import SecureMemory
import TestSupport
import Testing
@testable import Vault
import VaultTestSupport

/// One file operation of `passwd`, `import` or `export` fails once (EIO, a full disk, a flaky
/// network volume) while the process lives on, at every step in turn: the command reports it or
/// finishes, nothing of it is half there, the same vault object then refuses to write until it
/// is reopened (the log cannot know what the failed write left), and once reopened the command
/// runs again and takes.
@Suite struct TransientVaultFaultTests {
    /// Runs `body` with a fault at step 0, 1, 2, ... until the command under test finishes
    /// without reaching its fault (`body` returns whether it did); returns how many steps were faulted.
    static func atEveryStep(_ body: (FaultInjectingFileSystem, Int) throws -> Bool) throws -> Int {
        var step = 0
        while try body(FaultInjectingFileSystem(failAt: step, once: true), step) {
            step += 1
        }
        return step
    }

    static let mustReopen = "reopen the vault"

    @Test func passwdFailingOnceLeavesExactlyOnePassphraseAndCanBeRetried() throws {
        var outcomes: Set<String> = []
        let steps = try Self.atEveryStep { disk, step in
            let dir = TemporaryDirectory("passwd-once\(step)")
            let vaultPath = dir.path + "/v"
            _ = try makeVault(at: vaultPath)
            var reported = true
            do {
                try Vault.changePassphrase(at: vaultPath, from: passphrase("old passphrase"), to: passphrase("new passphrase"), fileSystem: disk)
                reported = false
            } catch {
                #expect(disk.crashed, "failed without an injected fault: \(error)")
            }
            let hit = disk.crashed
            let oldWorks = (try? Vault.open(at: vaultPath, passphrase: passphrase("old passphrase"))) != nil
            let newWorks = (try? Vault.open(at: vaultPath, passphrase: passphrase("new passphrase"))) != nil
            #expect(oldWorks != newWorks, "fault at step \(step) (\(disk.journal.last ?? "")): old \(oldWorks), new \(newWorks)")
            if !reported { #expect(newWorks, "step \(step): passwd reported success but the new passphrase does not open") }
            outcomes.insert(reported ? (newWorks ? "reported, new" : "reported, old") : "done")
            // Run again, through the same file system (its one fault spent): it takes.
            if hit {
                let current = newWorks ? "new passphrase" : "old passphrase"
                try Vault.changePassphrase(at: vaultPath, from: passphrase(current), to: passphrase("third"), fileSystem: disk)
                #expect((try? Vault.open(at: vaultPath, passphrase: passphrase("third"))) != nil, "step \(step)")
                #expect(try Vault.verify(at: vaultPath, passphrase: passphrase("third")).isOK, "step \(step)")
            }
            return hit
        }
        #expect(steps > 5)
        #expect(outcomes.contains("reported, old") && outcomes.contains("done"), "\(outcomes)")
        print("transient faults: passwd faulted at each of \(steps) steps, outcomes \(outcomes.sorted())")
    }

    static let csv = """
        type,start,end,value,unit,source
        steps,2025-08-06 08:00,2025-08-06 09:00,38,count,Phone
        steps,2025-08-06 10:00,2025-08-06 11:00,12,count,Watch
        heart-rate,2025-08-06 08:00,2025-08-06 08:00,61,count/min,Watch
        steps,2025-08-07 08:00,2025-08-07 09:00,500,count,Phone

        """

    @Test func importFailingOnceIsAllOrNothingAndTheRetryAddsTheRest() throws {
        var reportedFailures = 0
        let steps = try Self.atEveryStep { disk, step in
            let dir = TemporaryDirectory("import-once\(step)")
            let vaultPath = dir.path + "/v"
            _ = try makeVault(at: vaultPath)
            let file = dir.path + "/samples.csv"
            try Data(Self.csv.utf8).write(to: URL(fileURLWithPath: file))
            var vault = Self.openForWriting(vaultPath, disk)
            guard vault != nil else { return true }
            var added = 0
            do {
                added = try vault!.importFiles([file], timeZone: TimeZone(identifier: "UTC")!).added
            } catch {
                #expect(disk.crashed, "failed without an injected fault: \(error)")
                reportedFailures += 1
            }
            let stored = try Self.stepsPerDay(vaultPath)
            #expect(stored == [:] || stored == ["2025-08-06": 50, "2025-08-07": 500], "step \(step) (\(disk.journal.last ?? "")): \(stored)")
            if added > 0 { #expect(added == 4 && stored.count == 2, "step \(step)") }
            guard disk.crashed else { return false }
            try Self.retry(step: step, vault: &vault, vaultPath: vaultPath, disk: disk) { vault in
                _ = try vault.importFiles([file], timeZone: TimeZone(identifier: "UTC")!)
            }
            // Everything is there, once.
            #expect(try Self.stepsPerDay(vaultPath) == ["2025-08-06": 50, "2025-08-07": 500], "step \(step)")
            #expect(try Vault.verify(at: vaultPath, passphrase: passphrase("old passphrase")).isOK, "step \(step)")
            return true
        }
        #expect(steps > 5 && reportedFailures > 3)
        print("transient faults: import faulted at each of \(steps) steps, \(reportedFailures) reported")
    }

    /// The vault opened for writing through `disk`, or nil when the fault hit `open` itself,
    /// which reported it (the crash-point tests cover opening).
    static func openForWriting(_ vaultPath: String, _ disk: FaultInjectingFileSystem) -> Vault? {
        do {
            return try Vault.open(at: vaultPath, passphrase: passphrase("old passphrase"), mode: .readWrite, fileSystem: disk)
        } catch {
            #expect(disk.crashed)
            return nil
        }
    }

    /// Runs `command` again on the vault object whose write failed: it works, or refuses with
    /// "reopen the vault"; then on a reopened vault (same file system, its fault spent) it works.
    static func retry(step: Int, vault: inout Vault?, vaultPath: String, disk: FaultInjectingFileSystem, _ command: (Vault) throws -> Void) throws {
        do {
            try command(vault!)
            return
        } catch {
            #expect("\(error)".contains(mustReopen), "step \(step): \(error)")
        }
        vault = nil  // closes it, releasing the writer lock
        try command(try Vault.open(at: vaultPath, passphrase: passphrase("old passphrase"), mode: .readWrite, fileSystem: disk))
    }

    /// Step totals per day as a fresh process would read them (a new handle, the real file system).
    static func stepsPerDay(_ vaultPath: String) throws -> [String: Double] {
        let vault = try Vault.open(at: vaultPath, passphrase: passphrase("old passphrase"))
        return Dictionary(uniqueKeysWithValues: try vault.summary(metric: "steps", by: .day).map { ($0.period, $0.value) })
    }

    @Test func exportFailingOnceLeavesNoBundleOutsideTheAuditTrailAndCanBeRetried() throws {
        var reportedFailures = 0
        let steps = try Self.atEveryStep { disk, step in
            let dir = TemporaryDirectory("export-once\(step)")
            let vaultPath = dir.path + "/v"
            do {
                let vault = try makeVault(at: vaultPath)
                let file = dir.path + "/samples.csv"
                try Data(Self.csv.utf8).write(to: URL(fileURLWithPath: file))
                _ = try vault.importFiles([file], timeZone: TimeZone(identifier: "UTC")!)
                try RecipientKeyFiles.generate(prefix: dir.path + "/lab")
                try vault.addRecipient(name: "lab", publicKeyFile: dir.path + "/lab.pub")
                try vault.grant(recipient: "lab", categories: [.activity, .heart], from: nil, to: nil, granularity: .raw, expires: nil, purpose: nil)
            }
            var vault = Self.openForWriting(vaultPath, disk)
            guard vault != nil else { return true }
            let bundle = dir.path + "/out.hvb"
            do {
                _ = try vault!.export(to: "lab", path: bundle, today: LocalDay(year: 2025, month: 8, day: 10))
            } catch {
                #expect(disk.crashed, "failed without an injected fault: \(error)")
                reportedFailures += 1
            }
            try Self.checkBundles(in: dir.path, vaultPath: vaultPath, step: step)
            guard disk.crashed else { return false }
            // Again, to a new name: it works and is audited.
            try Self.retry(step: step, vault: &vault, vaultPath: vaultPath, disk: disk) { vault in
                _ = try vault.export(to: "lab", path: dir.path + "/again.hvb", today: LocalDay(year: 2025, month: 8, day: 10))
            }
            try Self.checkBundles(in: dir.path, vaultPath: vaultPath, step: step)
            #expect(FileManager.default.fileExists(atPath: dir.path + "/again.hvb"))
            #expect(try Vault.verify(at: vaultPath, passphrase: passphrase("old passphrase")).isOK, "step \(step)")
            return true
        }
        #expect(steps > 3 && reportedFailures > 2)
        print("transient faults: export faulted at each of \(steps) steps, \(reportedFailures) reported")
    }

    /// Every bundle in `directory` opens and its hash is an export in the audit trail. A
    /// temporary is left only when removing it failed after it was published: then it is a second
    /// name of an audited bundle.
    static func checkBundles(in directory: String, vaultPath: String, step: Int) throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        var audited: Set<String> = []
        for entry in try Vault.open(at: vaultPath, passphrase: passphrase("old passphrase")).history() {
            if case .exportPerformed(let record) = entry.event { audited.insert(record.bundleHash) }
        }
        for name in names where name.hasSuffix(".hvb") || name.contains(".hvb.tmp.") {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
            #expect(audited.contains(Digest.of([UInt8](bytes)).hex), "step \(step): \(name) is not in the audit trail")
            let out = NSTemporaryDirectory() + "/opened-\(UUID().uuidString)"
            defer { try? FileManager.default.removeItem(atPath: out) }
            _ = try BundleReader.open(directory + "/" + name, keyFile: directory + "/lab.key", outputDirectory: out)
        }
    }
}
