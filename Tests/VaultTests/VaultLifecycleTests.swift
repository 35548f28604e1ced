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

    @Test func eventsRoundTripThroughTheirEncoding() throws {
        let date = Date(timeIntervalSince1970: 1_732_320_000.123)
        let encoder = EventEncoder()
        let pushUps = Exercise(name: "push-ups", bodyParts: [.chest, .arms], motion: .strength)
        let set = HealthTimestamp(seconds: 1_710_111_300, utcOffset: -25_200)
        let events: [VaultEvent] = [
            .vaultCreated(at: date, kdf: "moderate"), .passphraseChanged(at: Date(timeIntervalSince1970: -86_400.5)),
            .exerciseDefined(ExerciseDefinition(at: date, exercise: Exercise(name: "Wall sit", bodyParts: [.legs, .fullBody], motion: .mobility))),
            .practiceLogged(PracticeEntry(exercise: pushUps, repetitions: 20, seconds: 90, at: set)),
            .practiceLogged(PracticeEntry(exercise: pushUps, repetitions: 0, seconds: 0, at: set)),
            .practiceLogged(PracticeEntry(exercise: pushUps, repetitions: 12, seconds: nil, at: set)),
        ]
        for event in events {
            let (bytes, _) = encoder.encode(event)
            let decoded = try bytes.withUnsafeBytes { try EventDecoder().decode($0, index: 0) }
            #expect(decoded == event)
            // Every strict prefix is refused rather than misread.
            for cut in 0..<bytes.count {
                let error = #expect(throws: UndecodableEvent.self) {
                    _ = try Array(bytes.prefix(cut)).withUnsafeBytes { try EventDecoder().decode($0, index: 7) }
                }
                #expect(error?.index == 7 && error?.reason.hasPrefix("truncated") == true, "cut at \(cut): \(String(describing: error))")
            }
        }
        #expect(throws: UndecodableEvent(index: 3, reason: "unknown encoding version (written by a newer build?)")) {
            _ = try [UInt8]([9, 1]).withUnsafeBytes { try EventDecoder().decode($0, index: 3) }
        }
    }
}
