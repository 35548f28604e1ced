import EventLog
import Foundation
import SecureMemory

extension Vault {
    /// The committed state of the backup at `destination` as a read-only vault directory
    /// (`BackupView`), with the passphrase that opens it (the one in force at its last run).
    static func backupView(at destination: String, passphrase: Passphrase, fileSystem: any FileSystem) throws -> BackupView {
        try openedBackupView(at: destination, passphrase: passphrase, fileSystem: fileSystem).view
    }

    /// `backupView`, with the master key the passphrase unlocked.
    static func openedBackupView(at destination: String, passphrase: Passphrase,
                                 fileSystem: any FileSystem) throws -> (view: BackupView, masterKey: SecretKey, vaultID: [UInt8]) {
        let dest = BackupDestination(path: absolute(destination), fileSystem: fileSystem)
        guard let marker = try fileSystem.readFileIfPresent(dest.file(BackupDestination.markerName), limit: 64), marker.count == 28 else {
            throw BackupError.noBackup(path: dest.path)
        }
        _ = try dest.check(vaultID: Array(marker.suffix(16)))
        guard let state = try dest.current() else { throw BackupError.noBackup(path: dest.path) }
        let files = try dest.stateContents(state)
        // The head's offset is authenticated when the view is verified; here it only bounds the log.
        let preliminary = BackupView(dest, state: state, logLength: UInt64.max)
        let masterKey = try unlock(directory: BackupView.root, passphrase: passphrase, fileSystem: preliminary)
        let (position, _) = try EventLog.headPosition(of: files["events.head"]!, masterKey: masterKey, path: dest.stateFile(state, "events.head"))
        return (BackupView(dest, state: state, logLength: position.offset), masterKey, Array(marker.suffix(16)))
    }

    /// Checks a backup as `verify` checks a vault: every frame authenticated and chained up to the
    /// backup's head, the key table the head names, every event decodable.
    public static func verifyBackup(at destination: String, passphrase: Passphrase,
                                    fileSystem: any FileSystem = POSIXFileSystem()) throws -> VerificationReport {
        try holdingBackupLock(of: destination, fileSystem: fileSystem) {
            let view = try backupView(at: destination, passphrase: passphrase, fileSystem: fileSystem)
            return try verify(at: BackupView.root, passphrase: passphrase, fileSystem: view)
        }
    }

    /// Runs `body` holding the destination's `backup.lock`, so that no run replaces the state it
    /// reads and removes the old one under it; waits up to ten seconds for a run to end. A
    /// destination without the lock file (one copied by hand, or on read-only media where no run
    /// can write either) is read without it.
    static func holdingBackupLock<T>(of destination: String, fileSystem: any FileSystem, _ body: () throws -> T) throws -> T {
        let path = absolute(destination) + "/" + BackupDestination.lockName
        guard fileSystem.exists(path) else { return try body() }
        let lock = try fileSystem.open(path, mode: .readOnly)
        guard try waitForLock(lock, attempts: 2_000) else { throw BackupError.busy(path: absolute(destination)) }
        defer { try? lock.unlock() }
        return try body()
    }

    /// Restores the backup at `destination` into `directory` (new or empty): the vault as it was at
    /// the backup's position, verified before this returns (its read models are rebuilt by the
    /// first command that reads them). Nothing is left in `directory` when it fails.
    @discardableResult
    public static func restore(from destination: String, to directory: String, passphrase: Passphrase,
                               fileSystem: any FileSystem = POSIXFileSystem()) throws -> VerificationReport {
        if fileSystem.exists(directory) {
            guard try fileSystem.contentsOfDirectory(directory).isEmpty else { throw BackupError.targetNotEmpty(path: directory) }
        }
        return try holdingBackupLock(of: destination, fileSystem: fileSystem) {
            try restoreUnlocked(from: destination, to: directory, passphrase: passphrase, fileSystem: fileSystem)
        }
    }

    private static func restoreUnlocked(from destination: String, to directory: String, passphrase: Passphrase,
                                        fileSystem: any FileSystem) throws -> VerificationReport {
        let (view, masterKey, vaultID) = try openedBackupView(at: destination, passphrase: passphrase, fileSystem: fileSystem)
        let before = try verify(at: BackupView.root, passphrase: passphrase, fileSystem: view)
        guard before.isOK else { return before }
        let created = !fileSystem.exists(directory)
        do {
            if created { try fileSystem.createDirectory(directory) }
            let log = try fileSystem.open(directory + "/events.log", mode: .createNew)
            let source = try view.open(BackupView.root + "/events.log", mode: .readOnly)
            _ = try copy(from: source, range: 0..<(try source.size()), to: log)
            try log.fullSync()
            // The keyslot last: until it is there, the directory is no vault.
            for name in BackupDestination.stateFiles where view.exists(BackupView.root + "/" + name) {
                let bytes = try view.open(BackupView.root + "/" + name, mode: .readOnly).readBytes(at: 0, count: 64 << 20)
                let file = try fileSystem.open(directory + "/" + name, mode: .createNew)
                try bytes.withUnsafeBytes { try file.write(at: 0, $0) }
                try file.fullSync()
            }
            // The key runs of `backup` without the passphrase record themselves to (a public key).
            try PendingBackupRuns.writePublicKey(in: directory, vaultID: vaultID, masterKey: masterKey, fileSystem: fileSystem)
            try fileSystem.syncDirectory(directory)
            let after = try verify(at: directory, passphrase: passphrase, fileSystem: fileSystem)
            guard after.isOK else { throw BackupError.damaged(path: directory, reason: after.problems.joined(separator: "; ")) }
            return after
        } catch {
            for name in (try? fileSystem.contentsOfDirectory(directory)) ?? [] { try? fileSystem.remove(directory + "/" + name) }
            if created { try? fileSystem.removeDirectory(directory) }
            throw error
        }
    }
}
