import EventLog
import Foundation
import HealthModel

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
    static let rekeyFiles = ["events.log", "events.head", identityFileName, "projections.sealed", "keyslot"]

    /// Replaces the master key (and the passphrase with `new`), re-encrypting the log, the
    /// identity and the read models' image under it, and records `masterKeyRotated`.
    public static func rekey(
        at directory: String, from old: Passphrase, to new: Passphrase, kdf: KDFParameters? = nil,
        now: Date = Date(), fileSystem: any FileSystem = POSIXFileSystem()
    ) throws {
        guard !new.isEmpty else { throw VaultError.emptyPassphrase }
        let vault = try open(at: directory, passphrase: old, mode: .readWrite, fileSystem: fileSystem)
        let identity = try vault.identity(now: now)
        let staging = directory + "/" + rekeyStaging
        try removeStaging(staging, fileSystem: fileSystem)
        let newKey = SecretKey.random()
        let vaultID = vault.log.vaultID

        // The log, event by event in its order, as one commit of the new log.
        let newLog = try EventLog.create(in: staging, vaultID: vaultID, masterKey: newKey, fileSystem: fileSystem)
        var transaction = try newLog.beginTransaction()
        var reader = try vault.log.reader()
        while let frame = try reader.next() {
            try frame.forEachEvent { _, bytes in try newLog.append(bytes, to: &transaction) }
        }
        let (marker, _) = EventEncoder().encode(.masterKeyRotated(at: now))
        try marker.withUnsafeBytes { try newLog.append($0, to: &transaction) }
        let newCommitted = try newLog.commit(&transaction)

        // The identity, and the read models' image when it is at the log's end (else it is
        // rebuilt on the next open, as after any loss of it).
        try sealIdentity(identity, to: staging + "/" + identityFileName, log: newLog, masterKey: newKey, fileSystem: fileSystem)
        if let image = try? SealedSnapshot.read(from: vault.projectionsPath, purpose: projectionsPurpose, vaultID: vaultID,
                                                masterKey: vault.masterKey, fileSystem: fileSystem),
           image.position == vault.log.committed {
            try image.plaintext.withUnsafeBytes { plaintext in
                try SealedSnapshot.write(plaintext, purpose: projectionsPurpose, position: newCommitted, vaultID: vaultID,
                                         masterKey: newKey, to: staging + "/projections.sealed", fileSystem: fileSystem)
            }
        }
        let current = try Keyslot.read(from: keyslotPath(in: directory), fileSystem: fileSystem)
        let keyslot = try Keyslot.seal(masterKey: newKey, vaultID: vaultID, passphrase: new, kdf: kdf ?? current.kdf)
        try keyslot.write(to: keyslotPath(in: staging), fileSystem: fileSystem)
        // The staging log's lock stays behind: the vault's own lock file is the one writers hold.
        try fileSystem.remove(staging + "/events.lock")
        try fileSystem.syncDirectory(staging)

        try fileSystem.rename(staging, to: directory + "/" + rekeyCommitted)
        try fileSystem.syncDirectory(directory)
        try moveCommittedRekey(in: directory, fileSystem: fileSystem)
    }

    /// Finishes a rekey that committed before a crash, and removes one that did not (as a
    /// writer). Runs before the keyslot is read, under the writer lock.
    static func finishInterruptedRekey(in directory: String, writer: Bool, fileSystem: any FileSystem) throws {
        let committed = directory + "/" + rekeyCommitted
        let staging = directory + "/" + rekeyStaging
        guard fileSystem.exists(committed) || (writer && fileSystem.exists(staging)) else { return }
        let lock = try EventLog.lockForWriting(directory: directory, fileSystem: fileSystem)
        // The lock is released when `lock` is closed, after the work.
        try withExtendedLifetime(lock) {
            if fileSystem.exists(committed) { try moveCommittedRekey(in: directory, fileSystem: fileSystem) }
            if fileSystem.exists(staging) { try removeStaging(staging, fileSystem: fileSystem) }
        }
    }

    /// Renames the files of `rekey.ready/` over the vault's, keyslot last, then removes the folder.
    private static func moveCommittedRekey(in directory: String, fileSystem: any FileSystem) throws {
        let committed = directory + "/" + rekeyCommitted
        for name in rekeyFiles {
            if fileSystem.exists(committed + "/" + name) {
                try fileSystem.rename(committed + "/" + name, to: directory + "/" + name)
                // Both folders durable before the next file moves: at most one rename in flight.
                try fileSystem.syncDirectory(directory)
                try fileSystem.syncDirectory(committed)
            } else if name == "projections.sealed", fileSystem.exists(directory + "/" + name) {
                // Sealed under the old key: useless now, and rebuilt on the next open.
                try fileSystem.remove(directory + "/" + name)
                try fileSystem.syncDirectory(directory)
            }
        }
        try removeStaging(committed, fileSystem: fileSystem)
    }

    /// Removes a staging folder and whatever is in it.
    private static func removeStaging(_ path: String, fileSystem: any FileSystem) throws {
        guard fileSystem.exists(path) else { return }
        for name in try fileSystem.contentsOfDirectory(path) { try fileSystem.remove(path + "/" + name) }
        try fileSystem.removeDirectory(path)
        try fileSystem.syncDirectory(directoryName(of: path))
    }
}
