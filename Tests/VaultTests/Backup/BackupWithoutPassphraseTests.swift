@testable import EventLog
import Envelope
import Foundation
@testable import HealthModel
import SyntheticHealth
import Testing
@testable import Vault
import VaultTestSupport

/// Backup runs that never open the vault (docs/backup.md, "Runs without the passphrase"): they
/// copy what a run with the key copies, record themselves where only the key reads it, never let
/// an erasure go unnamed, and ask for the passphrase where only the key can decide.
@Suite struct BackupWithoutPassphraseTests {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!

    static func run(_ t: ImportTestVault, _ destination: String, fileSystem: any FileSystem = POSIXFileSystem()) throws -> BackupWithoutPassphrase {
        try Vault.backupWithoutPassphrase(of: t.path, to: destination, fileSystem: fileSystem)
    }

    static func done(_ outcome: BackupWithoutPassphrase) throws -> BackupRun {
        guard case .done(let run) = outcome else { throw BackupError.damaged(path: "test", reason: "\(outcome)") }
        return run
    }

    /// A vault holding January and February 2024, generated.
    static func twoMonths() throws -> ImportTestVault {
        let t = try ImportTestVault()
        let zip = t.dir.path + "/export.zip"
        try SyntheticExport.writeZip(to: zip, options: .init(days: 60, firstDay: (2024, 1, 1), tripStart: 100))
        _ = try t.vault.importFiles([zip])
        return t
    }

    static func files(_ directory: String) throws -> [String: Data] {
        var out: [String: Data] = [:]
        for name in try FileManager.default.subpathsOfDirectory(atPath: directory) {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: directory + "/" + name, isDirectory: &isDirectory), !isDirectory.boolValue {
                out[name] = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
            }
        }
        return out
    }

    @Test func aRunCopiesWhatARunWithTheKeyCopiesAndOnlyTheKeyReadsItsRecord() throws {
        let t = try Self.twoMonths()
        let destination = t.dir.path + "/usb-backup"
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: false)
        let run = try Self.done(try Self.run(t, destination))
        #expect(run.copiedWhole && run.erasuresApplied == 0 && run.position == t.vault.log.committed.eventCount)
        let report = try Vault.verifyBackup(at: destination, passphrase: passphrase("p"))
        #expect(report.isOK && report.events == run.position, "\(report.problems)")
        let restored = t.dir.path + "/restored"
        try Vault.restore(from: destination, to: restored, passphrase: passphrase("p"))
        #expect(try BackupTests.answers(Vault.open(at: restored, passphrase: passphrase("p"))) == BackupTests.answers(t.vault))
        // The restored vault can be backed up without the passphrase too: its public key is the original's.
        let publicKey = "/" + PendingBackupRuns.publicKeyFileName
        #expect(try Data(contentsOf: URL(fileURLWithPath: restored + publicKey)) == Data(contentsOf: URL(fileURLWithPath: t.path + publicKey)))

        // The record names the destination only to the key: no file of the vault holds its path.
        let pending = try Data(contentsOf: URL(fileURLWithPath: t.path + "/" + PendingBackupRuns.fileName))
        for (name, bytes) in try Self.files(t.path) {
            #expect(bytes.range(of: Data("usb-backup".utf8)) == nil, "\(name) names the destination")
        }
        let rows = try t.vault.backupDestinations()
        #expect(rows.map(\.destination) == [run.destination] && rows.map(\.position) == [run.position] && rows.map(\.holdsErasedKeys) == [false])
        #expect(try t.vault.backupRunsNotOpened() == 0 && pending.count > 100)

        // A run with the key goes on from there, and takes the record into the list.
        try t.vault.practice(name: "squats", repetitions: 15, seconds: nil, at: LocalTime.parse("2024-02-20 08:00", timeZone: Self.berlin)!)
        let keyed = try t.vault.backup(to: destination)
        #expect(!keyed.copiedWhole && keyed.erasuresApplied == 0)
        #expect(!FileManager.default.fileExists(atPath: t.path + "/" + PendingBackupRuns.fileName))
        #expect(try t.vault.backupDestinations().map(\.position) == [keyed.position])

        // A destination that does not exist is the list's to judge: nothing is made.
        let missing = t.dir.path + "/not-mounted"
        guard case .needsPassphrase(let reason) = try Self.run(t, missing) else { Issue.record("a missing destination was backed up to"); return }
        #expect(reason == "\(missing) does not exist: only the list of backups says whether it is a backup not mounted")
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    /// An erasure between two runs: the list names the backup as holding the erased month (the
    /// record's keys are every key live or destroyed since it ran); the next run without the key
    /// refuses to decide and changes nothing; the run with the key destroys the month there.
    @Test func anErasureIsNeverMissedAndItsRunNeedsTheKey() throws {
        let t = try Self.twoMonths()
        let destination = t.dir.path + "/backup"
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: false)
        _ = try Self.done(try Self.run(t, destination))
        // The key table unchanged: the record's keys are exactly the vault's.
        #expect(try t.vault.backupDestinations().map(\.holdsErasedKeys) == [false])
        _ = try t.vault.erase(categories: [.heart], from: LocalMonth(year: 2024, month: 1), to: LocalMonth(year: 2024, month: 1))
        #expect(try t.vault.backupDestinations().map(\.holdsErasedKeys) == [true])

        let before = try Self.files(destination)
        guard case .needsPassphrase(let reason) = try Self.run(t, destination) else { Issue.record("ran over a changed key table"); return }
        #expect(reason.hasPrefix("the key table changed since the backup's last run"))
        #expect(try Self.files(destination) == before)
        let keyed = try t.vault.backup(to: destination)
        #expect(keyed.erasuresApplied == 1)
        #expect(try t.vault.backupDestinations().map(\.holdsErasedKeys) == [false])
    }

    /// A handle opened long ago (`serve`'s) folds a record into the list with the key table on
    /// disk, not the one it saw at its open: a month's key made since is counted as held, and its
    /// erasure later names the backup.
    @Test func aLongOpenHandleFoldsRecordsWithTheTableOnDisk() throws {
        let t = try ImportTestVault()
        try t.vault.practice(name: "squats", repetitions: 10, seconds: nil, at: LocalTime.parse("2024-01-10 08:00", timeZone: Self.berlin)!)
        let early = try Vault.open(at: t.path, passphrase: passphrase("p"))
        // A month the early handle never saw: a new key.
        try t.vault.practice(name: "squats", repetitions: 12, seconds: nil, at: LocalTime.parse("2024-03-10 08:00", timeZone: Self.berlin)!)
        let first = t.dir.path + "/first", second = t.dir.path + "/second"
        for destination in [first, second] { try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: false) }
        _ = try Self.done(try Self.run(t, first))
        // The early handle's run with the key writes the list, the record folded into it.
        _ = try early.backup(to: second)
        #expect(!FileManager.default.fileExists(atPath: t.path + "/" + PendingBackupRuns.fileName))
        _ = try t.vault.erase(categories: [.workouts], from: LocalMonth(year: 2024, month: 3), to: LocalMonth(year: 2024, month: 3))
        let rows = try t.vault.backupDestinations()
        #expect(rows.map(\.destination) == [try Vault.backupPath(first, of: t.path), try Vault.backupPath(second, of: t.path)])
        #expect(rows.map(\.holdsErasedKeys) == [true, true])
    }

    /// A version-1 log has no key table to name: a run needs the passphrase (a writer upgrades it).
    @Test func aVersionOneLogNeedsThePassphrase() throws {
        let dir = TemporaryDirectory("backup-nokey-v1")
        let path = try FixtureVaults.copy("vault-format1", in: dir)
        let vault = try Vault.open(at: path, passphrase: passphrase("fixture passphrase"))
        try PendingBackupRuns.writePublicKey(in: path, vaultID: vault.log.vaultID, masterKey: vault.masterKey, fileSystem: POSIXFileSystem())
        let destination = dir.path + "/backup"
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: false)
        guard case .needsPassphrase(let reason) = try Vault.backupWithoutPassphrase(of: path, to: destination) else {
            Issue.record("a version-1 log was backed up without the key")
            return
        }
        #expect(reason == "the vault's log is of an older format (a command with the passphrase upgrades it)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: destination).sorted() == ["HEALTHVAULT-BACKUP", "backup.lock"])
    }

    /// A re-key seals the recorded runs into the new list and makes a new public key; the old
    /// records go.
    @Test func aRekeyKeepsTheRunsAndReplacesTheKey() throws {
        let dir = TemporaryDirectory("backup-nokey-rekey")
        let path = dir.path + "/v", destination = dir.path + "/backup"
        do {
            let vault = try makeVault(at: path, passphrase: "p")
            try vault.practice(name: "squats", repetitions: 10, seconds: nil, at: LocalTime.parse("2024-01-10 08:00", timeZone: Self.berlin)!)
        }
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: false)
        let run = try Self.done(try Vault.backupWithoutPassphrase(of: path, to: destination))
        let oldKey = try Data(contentsOf: URL(fileURLWithPath: path + "/" + PendingBackupRuns.publicKeyFileName))
        try Vault.rekey(at: path, from: passphrase("p"), to: passphrase("q"), kdf: KDFParameters.minimumForTesting)
        #expect(!FileManager.default.fileExists(atPath: path + "/" + PendingBackupRuns.fileName))
        let newKey = try Data(contentsOf: URL(fileURLWithPath: path + "/" + PendingBackupRuns.publicKeyFileName))
        #expect(newKey != oldKey && newKey.count == oldKey.count)
        let reopened = try Vault.open(at: path, passphrase: passphrase("q"))
        #expect(try reopened.backupDestinations().map(\.destination) == [run.destination])
        // The re-key rewrote the key table: the next run needs the key, and copies the log whole.
        guard case .needsPassphrase = try Vault.backupWithoutPassphrase(of: path, to: destination) else { Issue.record("ran after a re-key"); return }
    }

    /// `backups.pub` replaced, the way someone who can write the vault's folder would: a run's
    /// record is sealed to their key, which the vault cannot open; it says so, and the next run
    /// with the key puts the key back and the destination into the list. Another vault's key is
    /// refused before anything is copied.
    @Test func anAlteredPublicKeyIsSaidAndPutRight() throws {
        let t = try ImportTestVault()
        try t.vault.practice(name: "squats", repetitions: 10, seconds: nil, at: LocalTime.parse("2024-01-10 08:00", timeZone: Self.berlin)!)
        let keyFile = t.path + "/" + PendingBackupRuns.publicKeyFileName
        let genuine = try Data(contentsOf: URL(fileURLWithPath: keyFile))
        var altered = genuine
        altered.replaceSubrange(24..<56, with: BoxKeyPair.generate().publicKey)
        try altered.write(to: URL(fileURLWithPath: keyFile))
        let destination = t.dir.path + "/backup"
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: false)
        _ = try Self.done(try Self.run(t, destination))
        #expect(try t.vault.backupRunsNotOpened() == 1 && t.vault.backupDestinations().isEmpty)
        _ = try t.vault.backup(to: destination)
        #expect(try Data(contentsOf: URL(fileURLWithPath: keyFile)) == genuine)
        #expect(try t.vault.backupRunsNotOpened() == 0 && t.vault.backupDestinations().count == 1)

        var foreign = genuine
        foreign[8] ^= 0xFF  // another vault's id
        try foreign.write(to: URL(fileURLWithPath: keyFile))
        guard case .needsPassphrase(let reason) = try Self.run(t, t.dir.path + "/backup") else { Issue.record("ran with another vault's key"); return }
        #expect(reason == "the vault has no key to record a run without it yet")
    }

    /// The process dies at every step of a run without the key: the previous backup always
    /// verifies, at its position or the new one, and the finished run is in the list.
    @Test func aRunCrashedAtAnyStepLeavesThePreviousBackupWhole() throws {
        let t = try ImportTestVault()
        let destination = t.dir.path + "/backup"
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: false)
        try BackupTests.crashEveryStep(of: t, destination: destination, first: { _ = try Self.done(try Self.run(t, destination)) }) { faults in
            _ = try Self.done(try Self.run(t, destination, fileSystem: faults))
        }
        #expect(try t.vault.backupDestinations().map(\.position) == [t.vault.log.committed.eventCount])
    }
}
