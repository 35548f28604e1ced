import EventLog
import TestSupport
import Foundation
@testable import HealthModel
import Testing
import VaultTestSupport
@testable import Vault

@Suite struct PassphraseChangeTests {
    @Test func passwdSwapsPassphrasesAndRecordsItInTheAuditTrail() throws {
        let dir = TemporaryDirectory()
        let vaultPath = dir.path + "/v"
        _ = try makeVault(at: vaultPath)
        try Vault.changePassphrase(at: vaultPath, from: passphrase("old passphrase"), to: passphrase("new passphrase"))
        #expect(throws: EventLogError.wrongPassphrase) { _ = try Vault.open(at: vaultPath, passphrase: passphrase("old passphrase")) }
        let events = try Vault.open(at: vaultPath, passphrase: passphrase("new passphrase")).allEvents()
        #expect(events.map(\.event.kind) == ["init", "identity", "passwd"])
    }

    @Test func aWrongOldPassphraseChangesNothing() throws {
        let dir = TemporaryDirectory()
        let vaultPath = dir.path + "/v"
        _ = try makeVault(at: vaultPath)
        let before = try Data(contentsOf: URL(fileURLWithPath: vaultPath + "/keyslot"))
        #expect(throws: EventLogError.wrongPassphrase) {
            try Vault.changePassphrase(at: vaultPath, from: passphrase("guess"), to: passphrase("new"))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: vaultPath + "/keyslot")) == before)
    }

    /// Crash `passwd` at each of its file operations: afterwards exactly one of the two
    /// passphrases opens the vault, the vault verifies, and passwd can be run again.
    @Test func passwdInterruptedAtEveryStepLeavesOldOrNewWorking() throws {
        var crashPoint = 0
        var completed = false
        var outcomes: [String] = []
        while !completed {
            let dir = TemporaryDirectory("passwd\(crashPoint)")
            let vaultPath = dir.path + "/v"
            _ = try makeVault(at: vaultPath)
            let faulty = FaultInjectingFileSystem(failAt: crashPoint)
            do {
                try Vault.changePassphrase(at: vaultPath, from: passphrase("old passphrase"), to: passphrase("new passphrase"), fileSystem: faulty)
                completed = true
            } catch {
                #expect(faulty.crashed, "failed without an injected crash: \(error)")
            }
            let oldWorks = (try? Vault.open(at: vaultPath, passphrase: passphrase("old passphrase"))) != nil
            let newWorks = (try? Vault.open(at: vaultPath, passphrase: passphrase("new passphrase"))) != nil
            #expect(oldWorks != newWorks, "crash at step \(crashPoint) (\(faulty.journal.last ?? "")): old \(oldWorks), new \(newWorks)")
            if completed { #expect(newWorks) }
            outcomes.append(newWorks ? "new" : "old")
            let current = newWorks ? "new passphrase" : "old passphrase"
            #expect(try Vault.verify(at: vaultPath, passphrase: passphrase(current)).isOK)
            // Leftovers of the crash (a keyslot.tmp) do not stop the next change.
            try Vault.changePassphrase(at: vaultPath, from: passphrase(current), to: passphrase("third"))
            #expect((try? Vault.open(at: vaultPath, passphrase: passphrase("third"))) != nil)
            crashPoint += 1
        }
        // Both outcomes occur: early crashes keep the old passphrase, late ones the new.
        #expect(outcomes.first == "old" && outcomes.last == "new")
        print("fault injection: passwd crashed at each of \(crashPoint) steps")
    }
}
