import EventLog
import Foundation
@testable import HealthModel
import TestSupport
import Testing
import VaultTestSupport
@testable import Vault
@testable import VaultEvents

@Suite struct VaultLifecycleTests {
    @Test func initRefusesAnExistingVaultAndForeignFiles() throws {
        let dir = TemporaryDirectory()
        _ = try makeVault(at: dir.path + "/v")
        #expect(throws: VaultError.directoryNotEmpty(path: dir.path + "/v")) { _ = try makeVault(at: dir.path + "/v") }
        try FileManager.default.createDirectory(atPath: dir.path + "/other", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: dir.path + "/other/notes.txt", contents: Data("x".utf8))
        #expect(throws: VaultError.directoryNotEmpty(path: dir.path + "/other")) { _ = try makeVault(at: dir.path + "/other") }
    }

    @Test func openingWhereNoVaultIsSaysSo() throws {
        let dir = TemporaryDirectory()
        #expect(throws: VaultError.noVault(path: dir.path)) { _ = try Vault.open(at: dir.path, passphrase: passphrase("x")) }
    }

    @Test func anEmptyPassphraseIsRefused() throws {
        let dir = TemporaryDirectory()
        #expect(throws: VaultError.emptyPassphrase) { _ = try makeVault(at: dir.path + "/v", passphrase: "") }
    }

    /// A crashed `init` leaves no vault (no keyslot) and can simply be run again.
    @Test func initInterruptedAtEveryStepCanBeRunAgain() throws {
        var crashPoint = 0
        var completed = false
        while !completed {
            let dir = TemporaryDirectory("init\(crashPoint)")
            let vaultPath = dir.path + "/v"
            let faulty = FaultInjectingFileSystem(failAt: crashPoint)
            do {
                _ = try Vault.create(at: vaultPath, passphrase: passphrase("p"), kdf: .minimumForTesting, kdfName: "test", fileSystem: faulty)
                completed = true
            } catch {
                #expect(faulty.crashed, "failed without an injected crash: \(error)")
                // Either the keyslot's rename happened (the vault exists and is whole) or there
                // is no vault yet and init runs again over the leftovers.
                if (try? Vault.open(at: vaultPath, passphrase: passphrase("p"))) == nil {
                    #expect(!FileManager.default.fileExists(atPath: vaultPath + "/keyslot"), "crash at \(faulty.journal.last ?? "")")
                    _ = try makeVault(at: vaultPath, passphrase: "p")
                }
            }
            let vault = try Vault.open(at: vaultPath, passphrase: passphrase("p"))
            #expect(try vault.allEvents().map(\.event.kind) == ["init", "identity"])
            crashPoint += 1
        }
    }
}
