import EventLog
import Foundation
import Vault

/// Feeds keyslot files to the keyslot parser and to `Vault.open`.
///
/// Each input is tried as it is and with its last four bytes replaced by the right CRC-32C, so
/// that mutations also reach the version, the key-derivation costs, the salt and the wrapped key.
/// Promises checked: a keyslot that opens the vault unwraps the vault's own key (the log
/// authenticates under it); costs outside the bounds are refused before any key derivation.
final class KeyslotHarness: FuzzHarness {
    private let workspace: FuzzWorkspace
    private let pristine: [UInt8]
    private var keyslotPath: String { Vault.keyslotPath(in: workspace.vaultPath) }

    /// Key derivation costs above these are parsed but not run: a fuzzer cannot wait for them.
    private static let cheapestCosts = KDFParameters(opsLimit: 4, memLimit: 1 << 20)

    init(workspace path: String) throws {
        workspace = FuzzWorkspace(path: path)
        _ = try workspace.fixedKeyVault()
        pristine = try workspace.read("vault/keyslot")
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
        guard keyslot.kdf.opsLimit <= Self.cheapestCosts.opsLimit, keyslot.kdf.memLimit <= Self.cheapestCosts.memLimit else {
            return .refused("costs too high to try here")
        }
        try workspace.write(bytes, to: "vault/keyslot")
        do {
            let vault = try Vault.open(at: workspace.vaultPath, passphrase: FuzzWorkspace.passphrase())
            var events = 0
            do {
                try vault.forEachEvent { _, _ in events += 1 }
            } catch {
                throw FuzzInvariantViolation("a keyslot unlocked the vault, yet its log does not read under that key: \(error)")
            }
            return .accepted
        } catch let violation as FuzzInvariantViolation {
            throw violation
        } catch {
            return .refused("\(error)")
        }
    }
}
