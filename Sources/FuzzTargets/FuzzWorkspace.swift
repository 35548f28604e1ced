import EventLog
import Foundation
import SecureMemory
import Vault

/// Files and a throwaway vault (cheapest key derivation) for a harness.
struct FuzzWorkspace {
    let path: String

    var vaultPath: String { path + "/vault" }

    /// The passphrase of every harness vault. It protects nothing: the vault holds generated data.
    static func passphrase() -> Passphrase {
        var bytes = Array("fuzz".utf8)
        return Passphrase(consuming: &bytes)
    }

    /// Removes the vault, if any, and creates an empty one.
    func freshVault() throws -> Vault {
        try? FileManager.default.removeItem(atPath: vaultPath)
        return try Vault.create(at: vaultPath, passphrase: Self.passphrase(), kdf: .minimumForTesting, kdfName: "fuzz")
    }

    /// Removes the vault, if any, and creates an empty one whose vault ID and master key are the
    /// same in every run, so that log and keyslot files kept in the corpus open in later runs.
    func fixedKeyVault() throws -> Vault {
        try? FileManager.default.removeItem(atPath: vaultPath)
        let vaultID = [UInt8](repeating: 0x56, count: 16)
        _ = try EventLog.create(in: vaultPath, vaultID: vaultID, masterKey: Self.fixedMasterKey)
        let keyslot = try Keyslot.seal(masterKey: Self.fixedMasterKey, vaultID: vaultID, passphrase: Self.passphrase(), kdf: .minimumForTesting)
        try keyslot.write(to: Vault.keyslotPath(in: vaultPath))
        return try Vault.open(at: vaultPath, passphrase: Self.passphrase(), mode: .readWrite)
    }

    /// The master key of `fixedKeyVault()`.
    static let fixedMasterKey = SecretKey(SecureBytes(count: SecretKey.byteCount) { $0.initializeMemory(as: UInt8.self, repeating: 0x4B) })

    /// Writes `bytes` to `name` in the workspace, replacing what was there, and returns its path.
    @discardableResult
    func write(_ bytes: [UInt8], to name: String) throws -> String {
        let file = path + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        return file
    }

    func read(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + "/" + name)))
    }

    /// What must not change when an input is refused: the log's size and the head record.
    func vaultState() throws -> VaultState {
        let logSize = (try FileManager.default.attributesOfItem(atPath: vaultPath + "/events.log")[.size] as? NSNumber)?.int64Value ?? -1
        let head = (try? Data(contentsOf: URL(fileURLWithPath: vaultPath + "/events.head"))) ?? Data()
        return VaultState(logSize: logSize, head: head)
    }

    struct VaultState: Equatable {
        var logSize: Int64
        var head: Data
    }
}
