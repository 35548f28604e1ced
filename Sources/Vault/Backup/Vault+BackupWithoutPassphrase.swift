import EventLog
import Foundation

/// What a backup run without the passphrase did: the run, or why it needs the passphrase.
public enum BackupWithoutPassphrase: Sendable, Equatable {
    case done(BackupRun)
    case needsPassphrase(reason: String)
}

extension Vault {
    /// A backup run that never opens the vault (docs/backup.md, "Runs without the passphrase"):
    /// ciphertext is copied as `backup(to:)` copies it, and the run is recorded in `backups.pending`,
    /// sealed to the vault's backup-run public key, for the next command that holds the master
    /// key to put into the list of destinations.
    ///
    /// It needs the passphrase (and does nothing) when what it must decide needs the key:
    /// - `destination` does not exist: whether it is a backup the list knows (a disk not mounted)
    ///   or a new one, only the list says;
    /// - the key table changed since the destination's last run: an erasure may have destroyed keys
    ///   there, which the run counts (`erasuresApplied`) by opening both tables;
    /// - the vault has no `backups.pub` yet (made by `init`, and by any run with the passphrase).
    public static func backupWithoutPassphrase(of directory: String, to destination: String, now: Date = Date(),
                                               fileSystem: any FileSystem = POSIXFileSystem()) throws -> BackupWithoutPassphrase {
        let path = try backupPath(destination, of: directory)
        guard let vaultID = try EventLog.vaultID(in: directory, fileSystem: fileSystem) else {
            return .needsPassphrase(reason: "the vault's log could not be read without it")
        }
        guard PendingBackupRuns.publicKey(in: directory, vaultID: vaultID, fileSystem: fileSystem) != nil else {
            return .needsPassphrase(reason: "the vault has no key to record a run without it yet")
        }
        guard fileSystem.exists(path) else {
            return .needsPassphrase(reason: "\(path) does not exist: only the list of backups says whether it is a backup not mounted")
        }
        let dest = BackupDestination(path: path, fileSystem: fileSystem)
        if try !dest.check(vaultID: vaultID) { try startBackup(at: dest, vaultID: vaultID) }
        let started = Int64((now.timeIntervalSince1970 * 1000).rounded())
        let copy: BackupCopy
        do {
            copy = try copyCommittedState(of: directory, vaultID: vaultID, masterKey: nil, into: dest) { previousTable, table in
                if table == nil { return "the vault's log is of an older format (a command with the passphrase upgrades it)" }
                if let previousTable, previousTable != table {
                    return "the key table changed since the backup's last run: the run counts the erased months' keys it destroys there"
                }
                return nil
            }
        } catch let refused as BackupCopyRefused {
            return .needsPassphrase(reason: refused.reason)
        }
        // A log without a key table was refused above.
        let run = PendingBackupRuns.Run(path: path, lastRun: started, eventCount: copy.position.eventCount, offset: copy.position.offset,
                                        bytes: (try? dest.size()) ?? 0, keyTableDigest: EventLog.digest(ofKeyTable: copy.keyTable ?? []),
                                        continued: copy.previousKeyTable != nil)
        let recorded = try holdingRegistryLock(in: directory, fileSystem: fileSystem) { () -> Bool in
            // Read again under the lock: a re-key that finished meanwhile replaced it, and removed the
            // records sealed to the old one.
            guard let current = PendingBackupRuns.publicKey(in: directory, vaultID: vaultID, fileSystem: fileSystem) else { return false }
            try PendingBackupRuns.append(run, in: directory, vaultID: vaultID, publicKey: current, fileSystem: fileSystem)
            return true
        }
        guard recorded else { return .needsPassphrase(reason: "the vault's key for recording runs went away during the run") }
        return .done(BackupRun(destination: path, position: copy.position.eventCount, bytesWritten: copy.written, erasuresApplied: 0,
                               copiedWhole: copy.copiedWhole))
    }
}
