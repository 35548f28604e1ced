import EventLog
import Foundation
import SecureMemory

/// The upgrade of a format-1 log (every event under the audit key) to format 2 (each category and
/// month under its own key, so that it can be erased). Done once, by the first writer to open the
/// vault with this build: the log is rewritten into `upgrade.tmp/` with the same master key and
/// vault id, the folder renamed to `upgrade.ready/` (the commit point), and its files moved over
/// the old ones, as a re-key moves its files. The keyslot and the identity do not change.
extension Vault {
    static let upgradeStaging = "upgrade.tmp"
    static let upgradeCommitted = "upgrade.ready"
    static let upgradeFiles = ["events.log", "keys.sealed", "events.head"]

    /// Upgrades the log in `directory` when it is format 1. The old log's handle, and the writer
    /// lock it holds, are gone when this returns.
    static func upgradeIfNeeded(in directory: String, masterKey: SecretKey, fileSystem: any FileSystem) throws {
        guard try EventLog.formatVersion(in: directory, fileSystem: fileSystem) < 2 else { return }
        let old = try EventLog.open(in: directory, masterKey: masterKey, mode: .readWrite, fileSystem: fileSystem)
        guard old.formatVersion < 2 else { return }
        try upgrade(old, in: directory, masterKey: masterKey, fileSystem: fileSystem)
    }

    /// Rewrites `old` (open for writing, so the writer lock is held) as a format-2 log.
    static func upgrade(_ old: EventLog, in directory: String, masterKey: SecretKey, fileSystem: any FileSystem) throws {
        let staging = directory + "/" + upgradeStaging
        try removeStaging(staging, fileSystem: fileSystem)
        let newLog = try EventLog.create(in: staging, vaultID: old.vaultID, masterKey: masterKey, fileSystem: fileSystem)
        var transaction = try newLog.beginTransaction()
        try LogRewrite.copy(from: old, into: newLog, transaction: &transaction)
        try newLog.commit(&transaction)
        // The staging log's lock stays behind: the vault's own lock file is the one writers hold.
        try fileSystem.remove(staging + "/events.lock")
        try fileSystem.syncDirectory(staging)
        try fileSystem.rename(staging, to: directory + "/" + upgradeCommitted)
        try fileSystem.syncDirectory(directory)
        try moveCommitted(directory + "/" + upgradeCommitted, files: upgradeFiles, in: directory, fileSystem: fileSystem)
    }
}
