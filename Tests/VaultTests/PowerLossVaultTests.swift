import Envelope
import EventLog
import Foundation
@testable import HealthModel
import Projections
import ResearchBundle
import SecureMemory
import Testing
@testable import Vault
import VaultTestSupport

/// `passwd`, `import` and `export` with power lost at every step, unsynced writes and directory
/// entries dropped: the vault opens with exactly one of the passphrases, an acknowledged import
/// is whole, and an acknowledged export's bundle is there under its name and audited.
@Suite struct PowerLossVaultTests {
    @Test func passwdWithPowerLostAtEveryStepLeavesExactlyOnePassphraseWorking() throws {
        var step = 0
        var completed = false
        while !completed {
            let dir = TemporaryDirectory("passwdpower\(step)")
            let vaultPath = dir.path + "/v"
            _ = try makeVault(at: vaultPath)
            let disk = PowerLossFileSystem(failAt: step)
            var acknowledged = false
            do {
                try Vault.changePassphrase(at: vaultPath, from: passphrase("old passphrase"), to: passphrase("new passphrase"), fileSystem: disk)
                acknowledged = true
                completed = !disk.died
            } catch {
                #expect(disk.died, "failed without an injected fault: \(error)")
            }
            try disk.losePower()
            let oldWorks = (try? Vault.open(at: vaultPath, passphrase: passphrase("old passphrase"))) != nil
            let newWorks = (try? Vault.open(at: vaultPath, passphrase: passphrase("new passphrase"))) != nil
            #expect(oldWorks != newWorks, "power lost at step \(step): old \(oldWorks), new \(newWorks)")
            if acknowledged { #expect(newWorks, "an acknowledged passwd was undone by power loss at step \(step)") }
            #expect(try Vault.verify(at: vaultPath, passphrase: passphrase(newWorks ? "new passphrase" : "old passphrase")).isOK)
            step += 1
        }
        #expect(step > 4)
        print("fault injection: passwd lost power at each of \(step) steps")
    }

    @Test func anAcknowledgedImportSurvivesPowerLoss() throws {
        var step = 0
        var completed = false
        let sourceDir = TemporaryDirectory("importpower-source")
        let xml = sourceDir.path + "/export.xml"
        try Data(export((0..<30).map { i in
            stepRecord("2024-05-01 08:\(i < 10 ? "0" : "")\(i):00 +0200", "2024-05-01 08:\(i < 10 ? "0" : "")\(i):30 +0200", "\(10 + i)")
        }.joined(separator: "\n")).utf8).write(to: URL(fileURLWithPath: xml))
        while !completed && step < 200 {
            let dir = TemporaryDirectory("importpower\(step)")
            let vaultPath = dir.path + "/v"
            _ = try makeVault(at: vaultPath, passphrase: "p")
            let disk = PowerLossFileSystem(failAt: step)
            var acknowledged = false
            do {
                let vault = try Vault.open(at: vaultPath, passphrase: passphrase("p"), mode: .readWrite, fileSystem: disk)
                _ = try vault.importFiles([xml])
                acknowledged = true
                completed = !disk.died
            } catch {
                #expect(disk.died, "failed without an injected fault: \(error)")
            }
            try disk.losePower()
            let reopened = try Vault.open(at: vaultPath, passphrase: passphrase("p"), mode: .readWrite)
            let samples = try reopened.allEvents().filter { if case .sample = $0.event { true } else { false } }.count
            #expect(samples == 0 || samples == 30, "power lost at step \(step): \(samples) samples")
            if acknowledged { #expect(samples == 30, "an acknowledged import was lost at step \(step)") }
            #expect(try reopened.importFiles([xml]).added == 30 - samples)
            step += 1
        }
        #expect(completed && step > 3)
        print("fault injection: import lost power at each of \(step) steps")
    }

    @Test func anAcknowledgedExportSurvivesPowerLossAndNoBundleIsUnaudited() throws {
        var step = 0
        var completed = false
        var acknowledgedRuns = 0
        while !completed {
            let dir = TemporaryDirectory("exportpower\(step)")
            let vaultPath = dir.path + "/v"
            do {
                let vault = try makeVault(at: vaultPath, passphrase: "p")
                let csv = dir.path + "/s.csv"
                try Data("type,start,end,value,unit,source\nsteps,2025-08-06 08:00,2025-08-06 09:00,38,count,Phone\n".utf8)
                    .write(to: URL(fileURLWithPath: csv))
                _ = try vault.importFiles([csv], timeZone: TimeZone(identifier: "UTC")!)
                try RecipientKeyFiles.generate(prefix: dir.path + "/lab")
                try vault.addRecipient(name: "lab", publicKeyFile: dir.path + "/lab.pub")
                try vault.grant(recipient: "lab", categories: [.activity], from: nil, to: nil, granularity: .raw, expires: nil, purpose: nil)
            }
            let disk = PowerLossFileSystem(failAt: step)
            let bundle = dir.path + "/out.hvb"
            var acknowledged = false
            do {
                let vault = try Vault.open(at: vaultPath, passphrase: passphrase("p"), mode: .readWrite, fileSystem: disk)
                _ = try vault.export(to: "lab", path: bundle, today: LocalDay(year: 2025, month: 8, day: 10))
                acknowledged = true
                completed = !disk.died
            } catch {
                #expect(disk.died, "failed without an injected fault: \(error)")
            }
            try disk.losePower()
            var audited: Set<String> = []
            for entry in try Vault.open(at: vaultPath, passphrase: passphrase("p")).history() {
                if case .exportPerformed(let record) = entry.event { audited.insert(record.bundleHash) }
            }
            if acknowledged {
                acknowledgedRuns += 1
                #expect(FileManager.default.fileExists(atPath: bundle), "an acknowledged export's bundle was lost at step \(step)")
            }
            if let bytes = FileManager.default.contents(atPath: bundle) {
                #expect(audited.contains(Digest.of([UInt8](bytes)).hex), "step \(step): a bundle outside the audit trail")
                _ = try BundleReader.open(bundle, keyFile: dir.path + "/lab.key", outputDirectory: dir.path + "/opened")
            }
            step += 1
        }
        #expect(step > 4 && acknowledgedRuns >= 1)
        print("fault injection: export lost power at each of \(step) steps")
    }
}
