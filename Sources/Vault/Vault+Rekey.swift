import EventLog
import Foundation
import SecureMemory
import VaultEvents

/// `passwd --rekey`: a new master key, and everything sealed under the old one sealed again, so
/// that an old keyslot (a backup, a copy taken with the old passphrase) opens nothing written
/// from then on.
///
/// The new vault files are written into `rekey.tmp/` inside the vault directory; renaming that
/// folder to `rekey.ready/` is the commit point; then its files are renamed over the old ones,
/// the keyslot last, and the folder removed. A crash before the commit leaves the old vault
/// whole (the next writer removes `rekey.tmp/`); a crash after it is finished by the next command
/// that opens the vault (`finishInterruptedRekey`). The writer lock is held throughout.
extension Vault {
    static let rekeyStaging = "rekey.tmp"
    static let rekeyCommitted = "rekey.ready"
    /// What a committed rekey moves into place, in this order: the keyslot last, so that until
    /// it moves the old passphrase and key still open whatever has not moved yet.
    static let rekeyFiles = ["events.log", "keys.sealed", "events.head", identityFileName, serverCredentialsFileName, BackupRegistry.fileName,
                             PendingBackupRuns.publicKeyFileName, "keyslot"]
    /// What a re-key replaced besides the master key: everything an old keyslot opened that
    /// would still act for the vault.
    public struct RekeyOutcome: Sendable, Equatable {
        /// The signing identity's fingerprint before and after: recipients must learn the new one.
        public var oldFingerprint: String
        public var newFingerprint: String
        /// Companion apps whose tokens were revoked: they pair again (`companion pair NAME`).
        public var unpairedApps: [String]
        /// Whether the server's certificate was dropped (the next `serve` or pairing makes one;
        /// phones that pinned the old one pair again).
        public var droppedServerCertificate: Bool
    }

    /// Replaces the master key (and the passphrase with `new`), re-encrypting the log under it, and
    /// records `masterKeyRotated`. Everything an old keyslot and passphrase opened that acts for the
    /// vault is replaced too, so that they sign, serve and pair nothing from now on: a new signing
    /// identity (recorded as rotated), the companion apps' tokens revoked, the server's
    /// certificate and key dropped. The read models, under the old key, are removed; the next
    /// command rebuilds them.
    @discardableResult
    public static func rekey(
        at directory: String, from old: Passphrase, to new: Passphrase, kdf: KDFParameters? = nil,
        now: Date = Date(), fileSystem: any FileSystem = POSIXFileSystem()
    ) throws -> RekeyOutcome {
        guard !new.isEmpty else { throw VaultError.emptyPassphrase }
        let vault = try open(at: directory, passphrase: old, mode: .readWrite, fileSystem: fileSystem)
        let oldIdentity = try vault.identity(now: now)
        let identity = VaultIdentity.generate()
        let apps = try vault.companionRegistry().active.map(\.name)
        let hadCertificate = fileSystem.exists(vault.serverCredentialsPath)
        // Opening as the writer removed any `rekey.tmp/` an earlier attempt left.
        let staging = directory + "/" + rekeyStaging
        let newKey = SecretKey.random()
        let vaultID = vault.log.vaultID

        // The log, event by event in its order, as one commit of the new log.
        let newLog = try EventLog.create(in: staging, vaultID: vaultID, masterKey: newKey, fileSystem: fileSystem)
        var transaction = try newLog.beginTransaction()
        try LogRewrite.copy(from: vault.log, into: newLog, transaction: &transaction)
        // Erased months stay refused: their tombstones (no keys) go into the new key table.
        try newLog.adoptTombstones(of: vault.log.dataKeys)
        // The rotation, the new identity and the tokens revoked, in the audit trail.
        let encoder = EventEncoder()
        let rotation: [VaultEvent] = [.masterKeyRotated(at: now), .identityRecorded(IdentityRecord(identity, reason: .rotated, at: now))]
            + apps.map { .companionRevoked(CompanionRevocation(at: now, name: $0)) }
        for event in rotation {
            let (encoded, _) = encoder.encode(event)
            try encoded.withUnsafeBytes { try newLog.append($0, to: &transaction) }
        }
        try newLog.commit(&transaction)

        try sealIdentity(identity, to: staging + "/" + identityFileName, log: newLog, masterKey: newKey, fileSystem: fileSystem)
        // The backups' list, sealed again: the next run to each rewrites it whole (its log is not this one).
        // Its lock is held from here until the new list is in place, so that a run recording
        // itself meanwhile is not lost under the list sealed before it.
        return try holdingRegistryLock(in: directory, fileSystem: fileSystem) {
            // With the runs made without the passphrase in it: their records are sealed to the old key.
            let backups = try vault.backupRegistry()
            if !backups.entries.isEmpty { try backups.write(in: staging, log: newLog, masterKey: newKey, fileSystem: fileSystem) }
            try PendingBackupRuns.writePublicKey(in: staging, vaultID: vaultID, masterKey: newKey, fileSystem: fileSystem)
            // The server's certificate and key are not carried over (`moveCommitted` removes them).
            let current = try Keyslot.read(from: keyslotPath(in: directory), fileSystem: fileSystem)
            let keyslot = try Keyslot.seal(masterKey: newKey, vaultID: vaultID, passphrase: new, kdf: kdf ?? current.kdf)
            try keyslot.write(to: keyslotPath(in: staging), fileSystem: fileSystem)
            // The staging log's lock stays behind: the vault's own lock file is the one writers hold.
            try fileSystem.remove(staging + "/events.lock")
            try fileSystem.syncDirectory(staging)

            try fileSystem.rename(staging, to: directory + "/" + rekeyCommitted)
            try fileSystem.syncDirectory(directory)
            try moveCommitted(directory + "/" + rekeyCommitted, files: rekeyFiles, in: directory, fileSystem: fileSystem)
            // In the new list now (a crash before this leaves records no key opens: they are dropped).
            try PendingBackupRuns.remove(in: directory, fileSystem: fileSystem)
            return RekeyOutcome(oldFingerprint: oldIdentity.fingerprint, newFingerprint: identity.fingerprint, unpairedApps: apps,
                                droppedServerCertificate: hadCertificate)
        }
    }

    /// Finishes a re-key or a log upgrade that committed before a crash, and removes one that did
    /// not (as a writer). Runs before the keyslot is read, under the writer lock.
    static func finishInterruptedRekey(in directory: String, writer: Bool, fileSystem: any FileSystem) throws {
        let rewrites = [(rekeyStaging, rekeyCommitted, rekeyFiles), (upgradeStaging, upgradeCommitted, upgradeFiles)]
        guard rewrites.contains(where: { fileSystem.exists(directory + "/" + $0.1) || (writer && fileSystem.exists(directory + "/" + $0.0)) }) else { return }
        let lock = try EventLog.lockForWriting(directory: directory, fileSystem: fileSystem)
        // The lock is released when `lock` is closed, after the work.
        try withExtendedLifetime(lock) {
            for (staging, committed, files) in rewrites {
                if fileSystem.exists(directory + "/" + committed) {
                    try moveCommitted(directory + "/" + committed, files: files, in: directory, fileSystem: fileSystem)
                }
                if fileSystem.exists(directory + "/" + staging) { try removeStaging(directory + "/" + staging, fileSystem: fileSystem) }
            }
        }
    }

    /// Removes the read models and the frame index (under the old master key, at positions of the
    /// old log: rebuilt on the next open), then renames `files` of the committed folder over the vault's, in order, and
    /// removes the folder.
    static func moveCommitted(_ committed: String, files: [String], in directory: String, fileSystem: any FileSystem) throws {
        let readModelFiles = [projectionsFileName + "-journal", projectionsFileName, legacyProjectionImageName, "frames.index"].map { directory + "/" + $0 }
        for path in readModelFiles where fileSystem.exists(path) {
            try fileSystem.remove(path)
            try fileSystem.syncDirectory(directory)
        }
        // The server's credentials of the old key: a re-key that did not carry them leaves them out.
        let credentials = serverCredentialsFileName
        if files.contains(credentials), !fileSystem.exists(committed + "/" + credentials), fileSystem.exists(directory + "/" + credentials),
           fileSystem.exists(committed + "/keyslot") {
            try fileSystem.remove(directory + "/" + credentials)
            try fileSystem.syncDirectory(directory)
        }
        for name in files where fileSystem.exists(committed + "/" + name) {
            try fileSystem.rename(committed + "/" + name, to: directory + "/" + name)
            // Both folders durable before the next file moves: at most one rename in flight.
            try fileSystem.syncDirectory(directory)
            try fileSystem.syncDirectory(committed)
        }
        try removeStaging(committed, fileSystem: fileSystem)
    }

    /// Removes a staging folder and whatever is in it.
    static func removeStaging(_ path: String, fileSystem: any FileSystem) throws {
        guard fileSystem.exists(path) else { return }
        for name in try fileSystem.contentsOfDirectory(path) { try fileSystem.remove(path + "/" + name) }
        try fileSystem.removeDirectory(path)
        try fileSystem.syncDirectory(directoryName(of: path))
    }
}
