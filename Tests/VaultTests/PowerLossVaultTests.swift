import EventLog
import Foundation
import Testing
@testable import Vault

/// `passwd` and `import` with power lost at every step, unsynced writes and directory entries
/// dropped: the vault opens with exactly one of the passphrases, and an acknowledged import is
/// whole.
@Suite struct PowerLossVaultTests {
    @Test func passwdWithPowerLostAtEveryStepLeavesExactlyOnePassphraseWorking() throws {
        var step = 0
        var completed = false
        while !completed {
            let dir = TemporaryDirectory("passwdpower\(step)")
            let vaultPath = dir.path + "/v"
            _ = try makeVault(in: vaultPath)
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
            _ = try makeVault(in: vaultPath, passphrase: "p")
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
}
