import EventLog
import Foundation
import HealthModel
import Projections
import Vault

/// Feeds keyslot files to the keyslot parser and to `Vault.open`.
///
/// Each input is tried as it is and with its last four bytes replaced by the right CRC-32C, so
/// that mutations also reach the version, the key-derivation costs, the salt and the wrapped key.
/// Promises checked: a keyslot that decodes asks for costs within the bounds (so opening cannot
/// be made to allocate without bound); one that unlocks yields the vault's own key, never
/// another; with that key and the vault's ID the vault opens and reads all its events.
final class KeyslotHarness: FuzzHarness {
    private let workspace: FuzzWorkspace
    private let pristine: [UInt8]
    private let pristineVaultID: [UInt8]
    private let eventsInVault: Int
    private var keyslotPath: String { Vault.keyslotPath(in: workspace.vaultPath) }

    /// Key derivation costs above these are parsed but not run: a fuzzer cannot wait for them.
    private static let cheapestCosts = KDFParameters(opsLimit: 4, memLimit: 1 << 20)

    init(workspace path: String) throws {
        workspace = FuzzWorkspace(path: path)
        let vault = try workspace.fixedKeyVault()
        _ = try vault.setGoal(.move, value: 450, from: LocalDay(year: 2025, month: 8, day: 1), now: Date(timeIntervalSince1970: 1_754_000_000))
        var events = 0
        try vault.forEachEvent { _, _ in events += 1 }
        eventsInVault = events
        pristine = try workspace.read("vault/keyslot")
        pristineVaultID = try Keyslot.decode(pristine, path: "keyslot").vaultID
    }

    func seeds() throws -> [FuzzSeed] {
        [FuzzSeed(name: "minimum-costs.keyslot", bytes: pristine)]
    }

    func run(_ input: [UInt8]) throws -> FuzzOutcome {
        var outcome = try open(input)
        if input.count >= 4 {
            var fixed = Array(input.dropLast(4))
            let crc = fixed.withUnsafeBytes { CRC32C.checksum($0) }
            withUnsafeBytes(of: crc.littleEndian) { fixed.append(contentsOf: $0) }
            let second = try open(fixed)
            if second.isAccepted { outcome = second }
        }
        try workspace.write(pristine, to: "vault/keyslot")
        return outcome
    }

    private func open(_ bytes: [UInt8]) throws -> FuzzOutcome {
        let keyslot: Keyslot
        do {
            keyslot = try Keyslot.decode(bytes, path: keyslotPath)
        } catch {
            return .refused("\(error)")
        }
        guard keyslot.kdf.isWithinBounds else {
            throw FuzzInvariantViolation("a keyslot asking for out-of-bounds costs decoded: \(keyslot.kdf)")
        }
        guard keyslot.kdf.opsLimit <= Self.cheapestCosts.opsLimit, keyslot.kdf.memLimit <= Self.cheapestCosts.memLimit else {
            return .refused("costs too high to try here")
        }
        do {
            let key = try keyslot.unlock(passphrase: FuzzWorkspace.passphrase())
            let same = key.withUnsafeBytes { a in FuzzWorkspace.fixedMasterKey.withUnsafeBytes { b in a.elementsEqual(b) } }
            guard same else { throw FuzzInvariantViolation("a keyslot unlocked to a key that is not the vault's") }
        } catch let violation as FuzzInvariantViolation {
            throw violation
        } catch {
            return .refused("\(error)")
        }
        try workspace.write(bytes, to: "vault/keyslot")
        do {
            let vault = try Vault.open(at: workspace.vaultPath, passphrase: FuzzWorkspace.passphrase())
            var events = 0
            try vault.forEachEvent { _, _ in events += 1 }
            guard events == eventsInVault else {
                throw FuzzInvariantViolation("the vault opened through a changed keyslot reads \(events) events, not \(eventsInVault)")
            }
            return .accepted
        } catch let violation as FuzzInvariantViolation {
            throw violation
        } catch {
            // The key is the vault's (checked above), so the log must open under it; only the
            // vault ID, which the keyslot also carries, may differ and be refused.
            guard keyslot.vaultID != pristineVaultID else {
                throw FuzzInvariantViolation("a keyslot with the vault's key and ID did not open it: \(error)")
            }
            return .refused("\(error)")
        }
    }
}
