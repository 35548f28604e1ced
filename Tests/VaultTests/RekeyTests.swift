import EventLog
import Foundation
@testable import HealthModel
import Projections
import ResearchBundle
import SecureMemory
import Testing
@testable import Vault
import VaultTestSupport

/// `passwd --rekey` (issue 15): a new master key, so a keyslot copied before it opens nothing
/// written since; the same events, identity and read models after it; all or nothing under a
/// crash at any step.
@Suite struct RekeyTests {
    static let old = "old passphrase", new = "new passphrase"

    /// A vault with a little of everything: samples, a recipient, a grant, read models.
    static func filledVault(in path: String) throws -> (contents: Contents, fingerprint: String, rings: Int) {
        let vault = try makeVault(at: path, passphrase: old)
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
        return (Contents(try vault.allEvents().map(\.event)), try vault.identity().fingerprint, try vault.rings(from: nil, to: nil).count)
    }

    /// What a log holds, as a rewrite must keep it: the audit events in their order, and the data
    /// events (which a rewrite groups by category and month) as a multiset.
    struct Contents: Equatable {
        var audit: [VaultEvent]
        var data: [VaultEvent]

        init(_ events: [VaultEvent]) {
            audit = events.filter(\.isAudit)
            data = events.filter { !$0.isAudit }.sorted { "\($0)" < "\($1)" }
        }
    }

    @Test func anOldKeyslotOpensNothingAfterARekey() throws {
        let dir = TemporaryDirectory("rekey")
        let path = dir.path + "/v"
        let before = try Self.filledVault(in: path)
        let oldKeyslot = try Data(contentsOf: URL(fileURLWithPath: path + "/keyslot"))
        let oldLog = try Data(contentsOf: URL(fileURLWithPath: path + "/events.log"))

        try Vault.rekey(at: path, from: passphrase(Self.old), to: passphrase(Self.new))
        #expect(try FileManager.default.contentsOfDirectory(atPath: path).sorted()
                == ["backups.pub", "backups.sealed.lock", "events.head", "events.lock", "events.log", "identity.sealed", "keys.sealed", "keyslot"])  // the image, under the old key, is gone
        let vault = try Vault.open(at: path, passphrase: passphrase(Self.new))
        let after = Contents(try vault.allEvents().map(\.event))
        #expect(after.audit.map(\.kind) == before.contents.audit.map(\.kind) + ["rekey", "identity"] && after.data == before.contents.data)
        #expect(try vault.identity().fingerprint != before.fingerprint)
        #expect(try vault.rings(from: nil, to: nil).count == before.rings)
        #expect(try Vault.verify(at: path, passphrase: passphrase(Self.new)).isOK)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path + "/events.log")) != oldLog)

        // The attack: the old keyslot put back, opened with the old passphrase.
        try oldKeyslot.write(to: URL(fileURLWithPath: path + "/keyslot"))
        #expect(throws: EventLogError.headRecordInvalid(path: path + "/events.head", reason: "authentication failed: written by another vault or altered")) {
            _ = try Vault.open(at: path, passphrase: passphrase(Self.old))
        }
        let report = try Vault.verify(at: path, passphrase: passphrase(Self.old))
        #expect(report.problems == ["\(path)/events.head: head record invalid (authentication failed: written by another vault or altered)"])
    }

    /// What an old keyslot and passphrase opened that still acts for the vault is replaced: the
    /// signing identity (a bundle signed with the old one fails `--expect-sender` with the new
    /// fingerprint), the paired apps' tokens and the server's certificate and key.
    @Test func aRekeyRotatesTheIdentityTheTokensAndTheServerCertificate() throws {
        let dir = TemporaryDirectory("rekey-rotates")
        let path = dir.path + "/v"
        let before = try Self.filledVault(in: path)
        do {
            let vault = try Vault.open(at: path, passphrase: passphrase(Self.old), mode: .readWrite)
            _ = try vault.pairCompanion(name: "phone")
            _ = try vault.pairCompanion(name: "watch")
            try vault.revokeCompanion(name: "watch")
            try vault.storeServerCredentials(SecureBytes(count: 32) { $0.initializeMemory(as: UInt8.self, repeating: 7) })
        }
        #expect(FileManager.default.fileExists(atPath: path + "/server-tls.sealed"))

        let outcome = try Vault.rekey(at: path, from: passphrase(Self.old), to: passphrase(Self.new))
        let vault = try Vault.open(at: path, passphrase: passphrase(Self.new))
        let now = try vault.identity().fingerprint
        #expect(outcome == Vault.RekeyOutcome(oldFingerprint: before.fingerprint, newFingerprint: now, unpairedApps: ["phone"],
                                              droppedServerCertificate: true))
        #expect(now != before.fingerprint)
        #expect(try vault.companionRegistry().active.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: path + "/server-tls.sealed"))
        #expect(try vault.serverCredentials() == nil)
        let audit = try vault.history().map(\.event.kind)
        #expect(Array(audit.suffix(3)) == ["rekey", "identity", "companion-revoke"])
        #expect(try Vault.verify(at: path, passphrase: passphrase(Self.new)).isOK)
    }

    /// Runs `passwd --rekey` once per step, stopped there by `stop` (which makes the file system,
    /// runs the re-key through it and says whether the injected fault fired and whether the re-key
    /// returned), and checks what the next writer opens: exactly the old vault or the new one,
    /// whole, with the same events and identity, no staging folder left, an acknowledged re-key
    /// never undone. Returns the steps and how many ended old and new.
    private func atEveryStep(_ label: String, stop: (_ step: Int, _ path: String) throws -> (fired: Bool, acknowledged: Bool)) throws
        -> (steps: Int, old: Int, new: Int) {
        var step = 0, old = 0, new = 0
        while true {
            let dir = TemporaryDirectory("rekey\(label)\(step)")
            let path = dir.path + "/v"
            let original = try Self.filledVault(in: path)
            let (fired, acknowledged) = try stop(step, path)
            // The next writer finishes a committed re-key or removes an uncommitted one.
            let newVault = try? Vault.open(at: path, passphrase: passphrase(Self.new), mode: .readWrite)
            let oldVault = newVault == nil ? try? Vault.open(at: path, passphrase: passphrase(Self.old), mode: .readWrite) : nil
            let vault = try #require(newVault ?? oldVault, "\(label) at step \(step): neither passphrase opens")
            if acknowledged { #expect(newVault != nil, "an acknowledged re-key was undone (\(label) at step \(step))") }
            let now = Contents(try vault.allEvents().map(\.event))
            #expect(now.audit.map(\.kind) == original.contents.audit.map(\.kind) + (newVault != nil ? ["rekey", "identity"] : []) && now.data == original.contents.data, "step \(step)")
            // The identity is the old one in the old vault, a new one (as the log's last record says) in the new.
            #expect((try vault.identity().fingerprint == original.fingerprint) == (newVault == nil), "step \(step)")
            #expect(!FileManager.default.fileExists(atPath: path + "/rekey.tmp") && !FileManager.default.fileExists(atPath: path + "/rekey.ready"))
            if newVault != nil { new += 1 } else { old += 1 }
            step += 1
            if acknowledged && !fired { return (step, old, new) }
        }
    }

    @Test func aRekeyCrashedAtEveryStepLeavesOneWholeVault() throws {
        let (steps, old, new) = try atEveryStep("crash") { step, path in
            let faulty = FaultInjectingFileSystem(failAt: step)
            do {
                try Vault.rekey(at: path, from: passphrase(Self.old), to: passphrase(Self.new), fileSystem: faulty)
                return (faulty.crashed, true)
            } catch {
                #expect(faulty.crashed, "failed without an injected crash: \(error)")
                return (true, false)
            }
        }
        #expect(new > 1 && old > 5, "new \(new), old \(old)")
        print("fault injection: rekey crashed at each of \(steps) steps (\(old) rolled back, \(new) finished)")
    }

    @Test func aRekeyLosingPowerAtEveryStepLeavesOneWholeVault() throws {
        let (steps, old, new) = try atEveryStep("power") { step, path in
            let disk = PowerLossFileSystem(failAt: step)
            var result = (fired: true, acknowledged: false)
            do {
                try Vault.rekey(at: path, from: passphrase(Self.old), to: passphrase(Self.new), fileSystem: disk)
                result = (disk.died, true)
            } catch {
                #expect(disk.died, "failed without an injected fault: \(error)")
            }
            try disk.losePower()
            return result
        }
        #expect(new > 1 && old > 5, "new \(new), old \(old)")
        print("fault injection: rekey lost power at each of \(steps) steps (\(old) old vault, \(new) new)")
    }
}
