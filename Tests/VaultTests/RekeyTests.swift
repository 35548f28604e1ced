import EventLog
import Foundation
@testable import HealthModel
import Projections
import Testing
@testable import Vault

/// `passwd --rekey` (issue 15): a new master key, so a keyslot copied before it opens nothing
/// written since; the same events, identity and read models after it; all or nothing under a
/// crash at any step.
@Suite struct RekeyTests {
    static let old = "old passphrase", new = "new passphrase"

    /// A vault with a little of everything: samples, a recipient, a grant, read models.
    static func filledVault(in path: String) throws -> (kinds: [String], fingerprint: String, rings: Int) {
        let vault = try makeVault(in: path, passphrase: old)
        let csv = path + ".csv"
        try Data("""
            type,start,end,value,unit,source
            steps,2024-03-05T08:00:00Z,2024-03-05T09:00:00Z,1234,count,Band
            active-energy,2024-03-05T08:00:00Z,2024-03-05T09:00:00Z,321,kcal,Band

            """.utf8).write(to: URL(fileURLWithPath: csv))
        _ = try vault.importFiles([csv], timeZone: TimeZone(identifier: "UTC")!)
        try RecipientKeyFiles.generate(prefix: path + "-lab")
        try vault.addRecipient(name: "lab", publicKeyFile: path + "-lab.pub")
        try vault.grant(recipient: "lab", categories: [.activity], from: nil, to: nil, granularity: .daily, expires: nil, purpose: nil)
        return (try vault.allEvents().map(\.event.kind), try vault.identity().fingerprint, try vault.rings(from: nil, to: nil).count)
    }

    @Test func anOldKeyslotOpensNothingAfterARekey() throws {
        let dir = TemporaryDirectory("rekey")
        let path = dir.path + "/v"
        let before = try Self.filledVault(in: path)
        let oldKeyslot = try Data(contentsOf: URL(fileURLWithPath: path + "/keyslot"))
        let oldLog = try Data(contentsOf: URL(fileURLWithPath: path + "/events.log"))

        try Vault.rekey(at: path, from: passphrase(Self.old), to: passphrase(Self.new))
        #expect(try FileManager.default.contentsOfDirectory(atPath: path).sorted()
                == ["events.head", "events.lock", "events.log", "identity.sealed", "keyslot"])  // the image, under the old key, is gone
        let vault = try Vault.open(at: path, passphrase: passphrase(Self.new))
        #expect(try vault.allEvents().map(\.event.kind) == before.kinds + ["rekey"])
        #expect(try vault.identity().fingerprint == before.fingerprint)
        #expect(try vault.rings(from: nil, to: nil).count == before.rings)
        #expect(try Vault.verify(at: path, passphrase: passphrase(Self.new)).isOK)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path + "/events.log")) != oldLog)

        // The attack: the old keyslot put back, opened with the old passphrase.
        try oldKeyslot.write(to: URL(fileURLWithPath: path + "/keyslot"))
        #expect(throws: (any Error).self) { _ = try Vault.open(at: path, passphrase: passphrase(Self.old)) }
        let report = try Vault.verify(at: path, passphrase: passphrase(Self.old))
        #expect(!report.isOK)
    }

    @Test func aRekeyCrashedAtEveryStepLeavesOneWholeVault() throws {
        var step = 0
        var completed = false
        var rolledForward = 0, rolledBack = 0
        while !completed {
            let dir = TemporaryDirectory("rekeycrash\(step)")
            let path = dir.path + "/v"
            let before = try Self.filledVault(in: path)
            let faulty = FaultInjectingFileSystem(failAt: step)
            do {
                try Vault.rekey(at: path, from: passphrase(Self.old), to: passphrase(Self.new), fileSystem: faulty)
                completed = true
            } catch {
                #expect(faulty.crashed, "failed without an injected crash: \(error)")
            }
            // The next writer finishes a committed rekey or removes an uncommitted one.
            let opened = (try? Vault.open(at: path, passphrase: passphrase(Self.new), mode: .readWrite)).map { ($0, Self.new) }
                ?? (try? Vault.open(at: path, passphrase: passphrase(Self.old), mode: .readWrite)).map { ($0, Self.old) }
            let (vault, which) = try #require(opened, "crash at step \(step) (\(faulty.journal.last ?? "")): neither passphrase opens")
            let kinds = try vault.allEvents().map(\.event.kind)
            #expect(kinds == (which == Self.new ? before.kinds + ["rekey"] : before.kinds), "step \(step)")
            #expect(try vault.identity().fingerprint == before.fingerprint)
            #expect(!FileManager.default.fileExists(atPath: path + "/rekey.tmp") && !FileManager.default.fileExists(atPath: path + "/rekey.ready"))
            if which == Self.new { rolledForward += 1 } else { rolledBack += 1 }
            step += 1
        }
        #expect(rolledForward > 1 && rolledBack > 5, "forward \(rolledForward), back \(rolledBack)")
        print("fault injection: rekey crashed at each of \(step) steps (\(rolledBack) rolled back, \(rolledForward) finished)")
    }

    @Test func aRekeyLosingPowerAtEveryStepLeavesOneWholeVault() throws {
        var step = 0
        var completed = false
        var finished = 0, before = 0
        while !completed {
            let dir = TemporaryDirectory("rekeypower\(step)")
            let path = dir.path + "/v"
            let original = try Self.filledVault(in: path)
            let disk = PowerLossFileSystem(failAt: step)
            var acknowledged = false
            do {
                try Vault.rekey(at: path, from: passphrase(Self.old), to: passphrase(Self.new), fileSystem: disk)
                acknowledged = true
                completed = !disk.died
            } catch {
                #expect(disk.died, "failed without an injected fault: \(error)")
            }
            try disk.losePower()
            // Whichever passphrase opens it (the open finishes or removes the interrupted re-key).
            let newVault = try? Vault.open(at: path, passphrase: passphrase(Self.new), mode: .readWrite)
            let oldVault = newVault == nil ? try? Vault.open(at: path, passphrase: passphrase(Self.old), mode: .readWrite) : nil
            let vault = try #require(newVault ?? oldVault, "power lost at step \(step) (\(disk.died)): neither passphrase opens")
            if acknowledged { #expect(newVault != nil, "an acknowledged re-key was undone by power loss at step \(step)") }
            let kinds = try vault.allEvents().map(\.event.kind)
            #expect(kinds == (newVault != nil ? original.kinds + ["rekey"] : original.kinds), "step \(step)")
            #expect(try vault.identity().fingerprint == original.fingerprint, "step \(step)")
            if newVault != nil { finished += 1 } else { before += 1 }
            step += 1
        }
        #expect(finished >= 1 && before > 5, "finished \(finished), old \(before)")
        print("fault injection: rekey lost power at each of \(step) steps (\(before) old vault, \(finished) new)")
    }
}
